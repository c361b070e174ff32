"""The dashboard's task board (`GET /api/tasks`): each factory turn of a user, newest
first, with the role at work, its stage, the loop's iteration, the tests passed and the
tokens spent so far. The factory owns the board, its query and its router; the server
includes the router (`cantata.applications` offers it) and knows nothing of factories.

The query is three store reads whatever the number of sessions, turns and events: the
user's factory turns, then their events and their tester's and deployer's entries, by
turn ids (tests/test_factory.py counts the statements).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from cantata.events import Event
from cantata.factory.progress import TaskProgress
from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep, StoreDep
from cantata.server.errors import error_responses
from cantata.store import EntryRow, Store, TurnRow

FACTORY = "factory"  # the bundled pipeline whose turns are the board's tasks
REPORTING = ("tester", "deployer")  # the agents whose outputs a task's row shows
NO_TASK = "No factory task yet: run `cantata factory \"REQUEST\"`, or send a request to the model 'factory'."

router = APIRouter(prefix="/api", tags=["factory"])


class Task(BaseModel):
    """One row of the board: a factory turn, running or done."""

    turn_id: int
    request: str
    status: str
    started_at: float | None
    role: str = Field(description="The agent that last did something.")
    stage: str = Field(description="What it did: queued, started, finished, failed, ...")
    iteration: int = Field(description="The critic-tester-fixer loop's iteration (0: not in the loop yet).")
    tests: str = Field(description="The tester's last report: dev and held-out examples passed.")
    tokens: int
    seconds: float
    deployed: bool
    agent: str | None = Field(description="The agent the task made, once the deployer named it.")
    version: int | None
    reason: str = Field(description="Why it was not deployed, if it was not.")


class TaskBoard(BaseModel):
    user: str
    tasks: list[Task]
    after: int = Field(description="The last event read: `/api/events?after=` follows on from it.")
    note: str


@router.get("/tasks", response_model=TaskBoard, responses=error_responses(404))
async def tasks(service: ServiceDep, store: StoreDep, caller: Caller, user: str | None = None) -> TaskBoard:
    """The agent factory's task board: each factory turn of the user's (newest first)."""
    return await task_board(store, service.visible_user(caller, user))


async def task_board(store: Store, user: str) -> TaskBoard:
    turns = await store.user_turns(user, pipeline=FACTORY)  # newest first
    if not turns:
        return TaskBoard(user=user, tasks=[], after=0, note=NO_TASK)
    ids = [t.id for t in turns]
    events, entries = await asyncio.gather(store.turn_events(ids), store.entry_histories(ids, REPORTING))
    after = max((e.stored_seq for found in events.values() for e in found), default=0)
    board = [task(t, events[t.id], _outputs(entries[t.id])) for t in turns]
    return TaskBoard(user=user, tasks=board, after=after, note=NO_TASK)


def _outputs(history: list[EntryRow]) -> dict[str, list[Any]]:
    """Agent -> its outputs in the order written (a looped agent's earlier iterations first)."""
    found: dict[str, list[Any]] = {}
    for entry in history:
        found.setdefault(entry.agent, []).append(entry.output)
    return found


def task(turn: TurnRow, events: list[Event], outputs: dict[str, list[Any]]) -> Task:
    """One row of the board, from the turn's events and its agents' outputs."""
    progress = TaskProgress()
    for event in events:
        progress.add(event)
    reports = [o for o in outputs.get("tester", []) if isinstance(o, dict)]
    if reports:
        progress.tested(reports[-1])
    deployment = next((o for o in outputs.get("deployer", []) if isinstance(o, dict)), None) or {}
    return Task(
        turn_id=turn.id,
        request=turn.message,
        status=turn.status,
        started_at=turn.started_at,
        role=progress.role,
        stage=progress.stage,
        iteration=progress.iteration,
        tests=progress.tests,
        tokens=progress.tokens,
        seconds=round(progress.seconds, 1),
        deployed=bool(deployment.get("deployed")),
        agent=deployment.get("name") or None,
        version=deployment.get("version"),
        reason=deployment.get("reason", ""),
    )
