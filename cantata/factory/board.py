"""The dashboard's task board (`GET /api/tasks`): each factory turn of a user, newest
first, with the role at work, its stage, the loop's iteration, the tests passed and the
tokens spent so far. The factory owns the board, its query and its router; the server
includes the router (`cantata.applications` offers it) and knows nothing of factories.

The query makes no store call per task: the user's sessions, each factory session's
turns, the user's stored events (in pages), and the user's entries (through the export,
the one read that returns every turn's entries at once). The calls per factory session
remain because no store read lists a user's turns across sessions; one that did (turns
by user and pipeline, with their events and entry histories by turn ids) would make the
board three reads.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from cantata.events import Event
from cantata.factory.progress import TaskProgress
from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep, StoreDep
from cantata.store import Store, TurnRow

FACTORY = "factory"  # the bundled pipeline whose turns are the board's tasks
EVENT_PAGE = 1000
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


@router.get("/tasks", response_model=TaskBoard)
async def tasks(service: ServiceDep, store: StoreDep, caller: Caller, user: str | None = None) -> TaskBoard:
    """The agent factory's task board: each factory turn of the user's (newest first)."""
    return await task_board(store, service.visible_user(caller, user))


async def task_board(store: Store, user: str) -> TaskBoard:
    sessions = [s.id for s in await store.sessions(user) if s.pipeline == FACTORY]
    if not sessions:
        return TaskBoard(user=user, tasks=[], after=0, note=NO_TASK)
    turns = [t for rows in await asyncio.gather(*(store.turns(s) for s in sessions)) for t in rows]
    events, after = await _events(store, user, {t.id for t in turns})
    outputs = _outputs(await store.export_user(user), set(sessions))
    board = [task(t, events[t.id], outputs.get((t.session_id, t.number), {})) for t in turns]
    board.sort(key=lambda t: t.turn_id, reverse=True)
    return TaskBoard(user=user, tasks=board, after=after, note=NO_TASK)


async def _events(store: Store, user: str, turn_ids: set[int]) -> tuple[dict[int, list[Event]], int]:
    """The tasks' events by turn, and the last of them (the user's, read in pages)."""
    found: dict[int, list[Event]] = defaultdict(list)
    seq, after = 0, 0
    while True:
        page = await store.events_after(seq, user_id=user, limit=EVENT_PAGE)
        for event in page:
            if event.turn_id in turn_ids:
                found[event.turn_id].append(event)
                after = event.stored_seq
        if len(page) < EVENT_PAGE:
            return found, after
        seq = page[-1].stored_seq


def _outputs(export: dict[str, Any], sessions: set[str]) -> dict[tuple[str, int], dict[str, list[Any]]]:
    """(session, turn number) -> agent -> its outputs in the order written (a looped
    agent's earlier iterations first), from the user's export."""
    found: dict[tuple[str, int], dict[str, list[Any]]] = {}
    for session in export["sessions"]:
        if session["session"] not in sessions:
            continue
        for turn in session["turns"]:
            by_agent: dict[str, list[Any]] = defaultdict(list)
            for entry in turn.get("earlier_iterations", []):
                by_agent[entry["agent"]].append(entry["output"])
            for agent, entry in turn["blackboard"].items():
                by_agent[agent].append(entry["output"])
            found[(session["session"], turn["turn"])] = by_agent
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
