"""What the store returns: plain typed rows, the same whichever database holds them.

Data only (no I/O, no imports of the runtime), so the modules that read rows (prompts,
the blackboard, the server's views) depend on these and not on a store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple


@dataclass(frozen=True)
class SessionRow:
    id: str
    user_id: str
    pipeline: str


@dataclass(frozen=True)
class SessionInfo:
    """A session as listed for its user: what it is and how far it has got."""

    id: str
    user_id: str
    pipeline: str
    created_at: float
    turns: int
    summary: str


class SessionSummary(NamedTuple):
    """The running summary of a session and the number of the last turn it covers."""

    text: str
    upto: int


@dataclass(frozen=True)
class TurnRow:
    id: int
    session_id: str
    user_id: str
    pipeline: str
    number: int
    status: str
    started_at: float
    finished_at: float | None
    message: str
    replies: list[tuple[str, str]]  # (agent, text) as delivered, early first


class UnfinishedTurn(NamedTuple):
    """A turn still marked running, as resume needs it."""

    session: SessionRow
    number: int
    message: str  # the user's


@dataclass(frozen=True)
class EntryRow:
    turn_id: int
    agent: str
    status: str
    output: Any
    error: str | None
    iteration: int = 0  # 1, 2, ... for the agents of a pipeline's loop


ToolCallStatus = Literal["started", "waiting", "ok", "error", "unknown", "denied"]


@dataclass(frozen=True)
class ToolCallRow:
    """One call of an agent's tool loop, as recorded: `started` until it ends, then `ok`
    (with its result), `error`, or `unknown` (it had side effects and was interrupted: the
    agent was told, and it was not repeated); a call of a tool with `approve: true` is
    `waiting` until a person decides, then runs (`started`...) or is `denied`."""

    turn_id: int
    agent: str
    iteration: int
    step: int  # the loop's step (model call) that asked for it, from 1
    index: int  # its place among that step's calls, from 0
    call_id: str
    tool: str
    arguments: Any
    status: ToolCallStatus
    result: str | None = None  # what the model read (capped)
    error: str | None = None
    duration_s: float | None = None
    bytes: int = 0  # of the result (or error) as the tool returned it, before the cap
    side_effects: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "index": self.index,
            "id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 6),
            "bytes": self.bytes,
            "iteration": self.iteration,
        }


ApprovalStatus = Literal["pending", "approved", "denied"]


@dataclass(frozen=True)
class ApprovalRow:
    """A person's approval of one tool call (a `waiting` call in tool_calls, at the same place:
    turn, agent, iteration, step, index), with whose turn it is."""

    id: int
    turn_id: int
    session_id: str
    user_id: str
    pipeline: str
    agent: str
    iteration: int
    step: int
    index: int
    call_id: str
    tool: str
    arguments: Any
    status: ApprovalStatus
    reason: str | None
    decided_by: str | None
    created_at: float
    decided_at: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "turn_id": self.turn_id,
            "session": self.session_id,
            "user": self.user_id,
            "pipeline": self.pipeline,
            "agent": self.agent,
            "iteration": self.iteration,
            "step": self.step,
            "index": self.index,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "reason": self.reason,
            "decided_by": self.decided_by,
            "created_at": self.created_at,
            "decided_at": self.decided_at,
        }


@dataclass(frozen=True)
class Decided:
    """What deciding an approval did: the approval as decided, and whether that was the turn's
    last pending one (the turn is `running` again then, to be resumed)."""

    approval: ApprovalRow
    resumable: bool


class TurnRef(NamedTuple):
    """A turn by its session and number in it: what a quotation of the person cites."""

    session: str
    number: int


@dataclass(frozen=True)
class PastTurn:
    turn_id: int
    number: int
    user_message: str
    reply: str | None


@dataclass(frozen=True)
class TurnContext:
    """What a turn's agents read from earlier turns: read once per turn, shared by all."""

    memory: dict[str, EntryRow]  # each memory agent's latest successful entry for the user
    summary: str = ""  # the session's running summary...
    summary_upto: int = 0  # ...covering turns up to this number
    recent: list[PastTurn] = field(default_factory=list)  # finished turns of the session before this one, oldest first


@dataclass(frozen=True)
class StartedTurn:
    id: int
    number: int  # in the session
    context: TurnContext


@dataclass(frozen=True)
class InstanceEvent:
    """An agent's stored event as the instances' live figures read it."""

    turn_id: int
    type: str
    agent: str
    data: dict[str, Any]
    turn_status: str  # of its turn now: a queued or started agent of a finished turn is no longer waiting
    wall: float  # when it happened (Unix time)
    user_id: str  # whose turn it is


@dataclass(frozen=True)
class AgentVersion:
    """One deployed version of an agent the factory made."""

    name: str
    version: int
    created_at: float
    active: bool
    forced: bool  # deployed with --force, whatever its tests said
    sandboxed: bool  # its tool code was tested under bubblewrap (False: --no-sandbox)
    task_turn: int | None  # the factory turn that made it
    summary: dict[str, Any]  # tests passed on each half, tokens, seconds


@dataclass(frozen=True)
class Forgotten:
    """What forgetting a user deleted from the store, so that the files kept beside it for
    those rows (a turn's working folders, a deployed version's folder) can go too."""

    sessions: int
    turns: tuple[int, ...]
    agent_versions: tuple[tuple[str, int], ...]  # (name, version) built from the user's requests
    agents: tuple[str, ...]  # agents left with no version, removed whole


@dataclass(frozen=True)
class ApiKeyRow:
    """A server's API key as stored: its public id and the sha256 of the whole key, never the key."""

    id: str
    user_id: str
    hash: str
    admin: bool
    created_at: float
    revoked_at: float | None  # None while it is active
