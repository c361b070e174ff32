"""The blackboard of one turn: one entry per agent, written once, committed in the order written."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from cantata.errors import StoreError
from cantata.store import EntryRow, Store
from cantata.turn import AgentStatus


class Blackboard:
    def __init__(self, store: Store, *, user_id: str, turn_id: int) -> None:
        self.store = store
        self.user_id = user_id
        self.turn_id = turn_id
        self.entries: dict[str, EntryRow] = {}

    async def load(self) -> None:
        """Entries already stored for this turn: the survivors of a crash, on resume."""
        self.entries = await self.store.entries(self.turn_id)

    async def history(self) -> list[EntryRow]:
        """Every stored entry of the turn, each iteration of a loop's agents included."""
        return await self.store.entry_history(self.turn_id)

    @property
    def outputs(self) -> dict[str, Any]:
        return {name: e.output for name, e in self.entries.items() if e.status == "ok"}

    def write(
        self, agent: str, *, status: AgentStatus, output: Any, error: str | None, iteration: int = 0
    ) -> Awaitable[None]:
        """Queue the entry; the result settles once it is committed. Readers need not wait
        for it: the store commits entries in the order written (see `Store.write_entry`)."""
        written = self.entries.get(agent)
        if written is not None and written.iteration >= iteration:
            raise StoreError(f"agent '{agent}' already wrote to turn {self.turn_id}")
        committed = self.store.write_entry(
            turn_id=self.turn_id,
            user_id=self.user_id,
            agent=agent,
            status=status,
            output=output,
            error=error,
            iteration=iteration,
        )
        self.entries[agent] = EntryRow(self.turn_id, agent, status, output, error, iteration)
        return committed
