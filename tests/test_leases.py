"""The session lease as a runtime holds it (cantata/leases.py): renewed while a turn runs,
so a turn longer than the lease's time to live keeps its session; given back at the end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cantata.errors import SessionBusy
from cantata.leases import LeaseKeeper
from cantata.store import SqliteStore


async def test_a_held_lease_is_renewed_past_its_time_to_live_and_released_after(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    here, there = SqliteStore(path), SqliteStore(path)  # two processes' stores on one file
    try:
        holder = LeaseKeeper(here, ttl_s=0.3)
        other = LeaseKeeper(there, ttl_s=0.3)
        async with holder.hold("s1", wait=False):
            await asyncio.sleep(1.0)  # three times the lease's life: only renewals keep it
            with pytest.raises(SessionBusy, match="another process"):
                async with other.hold("s1", wait=False):
                    pass
        async with other.hold("s1", wait=False):  # given back at the end of the block
            pass
    finally:
        await here.close()
        await there.close()
