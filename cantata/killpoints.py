"""A test hook for the kill tests: `CANTATA_TEST_KILL_AT=POINT` (or `POINT:WHO`) makes the
process stop itself with SIGKILL when a turn reaches that point, as a crash there would.

Points: `after_message` (the user's message is stored), `after_write:AGENT` (the agent's
entry is committed), `early_delivered` (the early reply is published, not yet committed),
`finishing` (the turn's status is queued, not yet committed), `loop_iteration:N` (an
iteration of the loop starts), `compaction` (the summary is written, not yet stored),
`tool_call:TOOL` (a call of an agent's tool has started, its result not yet stored),
`tool_step:N` (step N of a tool loop has its calls' results stored, before the next step).
Unset, `reached` is one dictionary look-up.
"""

from __future__ import annotations

import os
import signal

ENV = "CANTATA_TEST_KILL_AT"


def armed() -> bool:
    """Whether a point is set (a hook that costs more than `reached` is added only then)."""
    return ENV in os.environ


def reached(point: str, who: object = None) -> None:
    target = os.environ.get(ENV)
    if target is not None and target in (point, f"{point}:{who}"):
        os.kill(os.getpid(), signal.SIGKILL)
