"""The store's interface, one protocol per concern; `base.Store` is all of them together.

Every read and write is awaitable: an implementation does its I/O off the event loop
(SQLite on one worker thread, PostgreSQL on an async driver), so a server running many
turns never waits on a disk. The one synchronous method, `record_event`, only buffers:
buffered events are committed with the next write, or shortly after (see `events.py`
for how subscribers get them in order, with their sequence number).

Split by concern so that a caller can ask for what it uses (the factory's registry needs
no blackboard), and so that a new implementation can be built and tested a concern at a
time; the conformance tests (tests/test_store.py) run every implementation through them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from cantata.events import Event
from cantata.store.rows import (
    AgentVersion,
    ApiKeyRow,
    ApprovalRow,
    Decided,
    EntryRow,
    Forgotten,
    InstanceEvent,
    PastTurn,
    SessionInfo,
    SessionRow,
    SessionSummary,
    StartedTurn,
    ToolCallRow,
    TurnContext,
    TurnRef,
    TurnRow,
    UnfinishedTurn,
)

# The most earlier turns a turn's context reads back (the briefing's budget keeps fewer):
# every implementation reads the same, in `start_turn`, `turn_context` and `recent_turns`.
RECENT_TURNS = 50

Committed = Callable[[list[Event]], None]
# Told that events may have been committed by another process: the largest sequence number
# committed, when known (None: look).
Wake = Callable[[int | None], None]
# Runs until cancelled, calling `wake` whenever another process commits events.
Notifications = Callable[[Wake], Coroutine[Any, Any, None]]


class SessionStore(Protocol):
    """Users' sessions and their turns: the user's message in, the replies out."""

    def new_session(self, user_id: str, pipeline: str) -> SessionRow:
        """A new session's row (no I/O): it is stored with its first turn."""
        ...

    async def get_session(self, session_id: str) -> SessionRow | None: ...

    async def sessions(self, user_id: str) -> list[SessionInfo]:
        """The user's sessions, newest first."""
        ...

    async def start_turn(
        self, session: SessionRow, message: str, *, new_session: bool = False, memory: Sequence[str] = ()
    ) -> StartedTurn:
        """Store the user's message in a new turn and read the turn's context (`memory`
        names the agents whose latest outputs it reads), in one round trip: the turn waits
        on it before any agent starts. Numbers are unique per session even with several
        writers at once."""
        ...

    async def turn_context(self, session: SessionRow, turn_id: int, memory: Sequence[str] = ()) -> TurnContext:
        """The context of a turn already started (one being resumed), as `start_turn` reads it."""
        ...

    def finish_turn(self, turn_id: int, status: str, replies: list[tuple[str, str]]) -> Awaitable[None]:
        """Set the turn's status and store its replies (none: only the status changes).
        Queued at the call behind the turn's entries, like `write_entry`: the last
        entries and the finish share a commit. `waiting` (a paused turn) is set only while one
        of its approvals is pending: one decided meanwhile leaves the turn `running`."""
        ...

    def add_reply(self, turn_id: int, agent: str, text: str) -> Awaitable[None]:
        """Store a reply the moment it is delivered (the early one), so that the session's
        history holds it even if the turn never finishes. Queued like `write_entry`: it
        shares the commit of the entry it delivers."""
        ...

    async def get_turn(self, turn_id: int) -> TurnRow | None: ...

    async def turns(self, session_id: str) -> list[TurnRow]:
        """The session's turns, in order."""
        ...

    async def user_turns(self, user_id: str, *, pipeline: str | None = None) -> list[TurnRow]:
        """The user's turns across their sessions (of one pipeline's sessions, if given),
        newest first: one read however many sessions (a report over a user's turns, such
        as the factory's task board, reads their events and entries by turn ids next)."""
        ...

    async def turn_messages(self, user_id: str, turns: Sequence[TurnRef]) -> dict[TurnRef, str]:
        """The person's message of each of these turns of theirs, in any of their sessions,
        in one read: what a quotation citing the turn is checked against. A turn that is
        not theirs, or does not exist, is absent."""
        ...

    async def unfinished_turn(self, turn_id: int) -> UnfinishedTurn | None:
        """The turn if it is still marked running (to resume it), else None."""
        ...

    async def running_turns(self, session_id: str | None = None) -> list[int]:
        """The ids of the turns still marked running (of one session, if given), oldest
        first: what a runtime resumes at start."""
        ...

    async def session_summary(self, session_id: str) -> SessionSummary: ...

    async def set_summary(self, session_id: str, summary: str, upto: int) -> None: ...

    async def recent_turns(
        self, session_id: str, before_turn: int, *, after_number: int = 0, limit: int = RECENT_TURNS
    ) -> list[PastTurn]:
        """Turns before `before_turn` and after number `after_number`, oldest first, with
        their latest reply: an unfinished one too (a crashed turn's message and early reply
        stay in the conversation)."""
        ...


class SessionLeases(Protocol):
    """One turn at a time per session, across processes: a lease with an expiry."""

    async def lease_session(
        self, session_id: str, holder: str, *, ttl_s: float, take_from: str | None = None
    ) -> str | None:
        """Take the session's lease for `holder` until `ttl_s` from now, or renew it: it is
        taken if free, expired, already `holder`'s, or held by `take_from` (a holder known
        to be gone). None once `holder` holds it; else who does."""
        ...

    async def release_session(self, session_id: str, holder: str) -> None:
        """Give the lease back, if `holder` still holds it."""
        ...

    def fence_turn(self, turn_id: int, session_id: str, holder: str | None) -> None:
        """From now on (no I/O), commit the turn's entries, replies and status only while
        `holder` holds the session's lease, else fail them with a StoreError: a process that
        comes back after its turn was taken over cannot write over its successor. None: the
        turn's writes are no longer checked."""
        ...


class BlackboardStore(Protocol):
    """Agents' outputs: one entry per turn, agent and iteration, written once."""

    def write_entry(
        self,
        *,
        turn_id: int,
        user_id: str,
        agent: str,
        status: str,
        output: Any,
        error: str | None,
        iteration: int = 0,
    ) -> Awaitable[None]:
        """Queue the entry at the call and return what settles once it is committed (an
        implementation may hold it a few tens of milliseconds to share a commit).

        Write-once: a second entry for the same turn, agent and iteration fails with a
        StoreError. Entries are committed in the order of the calls, and every read sees
        the writes queued before it. So the scheduler starts an agent's readers at once,
        without waiting for the commit: a reader's entry is never committed before the
        entries it read, and a turn resumed after a crash finds a consistent blackboard."""
        ...

    async def entries(self, turn_id: int) -> dict[str, EntryRow]:
        """Each agent's entry in the turn (a looped agent's latest iteration)."""
        ...

    async def entry_history(self, turn_id: int) -> list[EntryRow]:
        """Every entry of the turn, every iteration, in the order written."""
        ...

    async def entry_histories(
        self, turn_ids: Sequence[int], agents: Sequence[str] | None = None
    ) -> dict[int, list[EntryRow]]:
        """`entry_history` of many turns at once, by turn id (each id asked for has a list,
        empty if the turn has no entry); only the entries of `agents`, if given."""
        ...

    async def latest_outputs(self, user_id: str, agents: list[str], before_turn: int) -> dict[str, EntryRow]:
        """Each agent's latest successful entry for this user, from turns before `before_turn`."""
        ...


class ToolCallLog(Protocol):
    """Agents' tool calls, each recorded when it starts and again when it ends."""

    def record_tool_calls(self, rows: Sequence[ToolCallRow]) -> Awaitable[None]:
        """Queue the rows (a call's row replaces the one at its place: turn, agent,
        iteration, step, index) and return what settles once they are committed."""
        ...

    async def tool_calls(self, turn_ids: Sequence[int]) -> dict[int, list[ToolCallRow]]:
        """The calls of these turns, by turn id (each id asked for has a list), each turn's
        by agent, iteration, step and index."""
        ...


class ApprovalLog(Protocol):
    """People's approvals of tool calls (`approve: true`): asked, listed, decided once."""

    async def request_approvals(self, rows: Sequence[ToolCallRow]) -> list[int]:
        """Record these `waiting` calls and an approval for each (asking again for one already
        asked gives its id, whatever was decided); their ids, once committed."""
        ...

    async def approvals(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        turn_id: int | None = None,
        approval_id: int | None = None,
        pending: bool = False,
    ) -> list[ApprovalRow]:
        """The approvals matching every filter given, oldest first."""
        ...

    async def decide_approval(self, approval_id: int, *, approved: bool, reason: str | None, by: str) -> Decided | None:
        """Decide a pending approval; when it was its turn's last pending one, the `waiting`
        turn becomes `running` in the same commit (so a crash after it leaves a turn that
        starting resumes). None when it is not pending (no such approval, or decided)."""
        ...


class EventLog(Protocol):
    """Every persisted event of every turn, numbered in the order committed."""

    def record_event(self, event: Event) -> None:
        """Buffer a persisted event (others are ignored); committed with the next write or
        shortly after, when its `seq` is set and the `on_commit` callbacks get it."""
        ...

    def on_commit(self, callback: Committed) -> None:
        """Call `callback(events)` on the event loop once recorded events are committed."""
        ...

    async def events(self, turn_id: int) -> list[Event]:
        """The turn's stored events, in order (buffered ones are committed first)."""
        ...

    async def turn_events(self, turn_ids: Sequence[int]) -> dict[int, list[Event]]:
        """`events` of many turns at once, by turn id (each id asked for has a list, empty
        if the turn has none), each turn's in order."""
        ...

    async def events_after(
        self, seq: int, *, user_id: str | None = None, turn_id: int | None = None, limit: int = 1000
    ) -> list[Event]:
        """Stored events with a sequence number above `seq`, oldest first: a reconnecting
        subscriber's replay (SSE `Last-Event-ID`)."""
        ...

    async def last_event_seq(self) -> int:
        """The largest sequence number stored (0 with none): where a follower starts."""
        ...

    def notifications(self) -> Notifications | None:
        """How this process hears of events other processes commit (PostgreSQL: LISTEN), or
        None where the turns are followed in the process that runs them (SQLite)."""
        ...

    async def instance_events(self, *, since_wall: float, user_id: str | None = None) -> list[InstanceEvent]:
        """Agent events since a wall-clock time, oldest first, with their turn's status
        (of one user's turns, if given)."""
        ...


class AgentRegistry(Protocol):
    """The factory's deployed agents, versioned; one version of each is active."""

    async def add_agent_version(
        self, name: str, *, forced: bool, sandboxed: bool, task_turn: int | None, summary: dict[str, Any]
    ) -> int:
        """Record a new version of `name` (creating the agent), make it active, return its number."""
        ...

    async def agent_versions(self, name: str | None = None) -> list[AgentVersion]:
        """Every version of one agent (or of all), oldest first."""
        ...

    async def activate_agent(self, name: str, version: int) -> bool:
        """Make an existing version the active one (rollback); False if there is no such version."""
        ...

    async def remove_agent(self, name: str) -> int:
        """Forget the agent and all its versions; return how many versions there were."""
        ...


class ApiKeys(Protocol):
    """The server's API keys (cantata/server/keys.py says what a key is), in the store with the
    state: every server on one database knows every key, whichever created it."""

    async def add_api_key(self, key: ApiKeyRow) -> bool:
        """Store a new key; False, storing nothing, if its id is already another key's."""
        ...

    async def api_key(self, key_id: str) -> ApiKeyRow | None:
        """The key with this id, revoked or not; None if there is none."""
        ...

    async def api_keys(self) -> list[ApiKeyRow]:
        """Every key, revoked ones too, oldest first."""
        ...

    async def revoke_api_key(self, key_id: str) -> ApiKeyRow | None:
        """Revoke the key now and return it; None if there is no active key with this id."""
        ...


class UserData(Protocol):
    """A user's data as a whole, across the other concerns: the right to see it and to erase it."""

    async def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored about one user, as one JSON document."""
        ...

    async def forget_user(self, user_id: str) -> Forgotten:
        """Delete the user and everything derived from them, in one transaction: their rows,
        and the agent versions the factory built from their turns (an agent left with no
        version goes whole; one whose active version went activates its newest remaining).
        Return what went, for the files kept beside those rows."""
        ...
