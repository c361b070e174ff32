"""What a pipeline's own code receives: `FunctionContext` (functions, shortcuts, a loop's
stop condition) and `CheckContext` (checks), as plain data.

A function that needs more than the turn's data gets it as a narrow, typed dependency,
in the manner of pydantic-ai's `RunContext[Deps]`: `ctx.runtime` is a `Runtime`, the few
things a function may use of the runtime running its turn, not the runtime itself.
`cantata.Cantata` satisfies it structurally, so this module imports nothing that runs
turns, and anything with those few members (a test's fake) can stand in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cantata.store.rows import TurnRef

if TYPE_CHECKING:
    from cantata.loader import Pipeline
    from cantata.store import Store
    from cantata.turn import TurnResult


class ScratchRuntime(Protocol):
    """A runtime for turns that are not the user's, closed by whoever asked for it."""

    async def run_turn(
        self, pipeline: Pipeline, message: str, *, user: str = ..., options: dict[str, Any] | None = None
    ) -> TurnResult: ...

    async def close(self) -> None: ...


class Runtime(Protocol):
    """What a function may use of the runtime running its turn: the factory's tester runs
    the agent it is making on the same instances (`scratch`), its deployer writes under the
    home folder and records the version in the store, and reads the turn's events there."""

    @property
    def home(self) -> Path: ...

    @property
    def store(self) -> Store: ...

    def scratch(self, home: Path) -> ScratchRuntime:
        """A runtime on the same instances with its own store under `home`."""
        ...


# The person's messages of some of their turns, in one store read (Store.turn_messages for
# the turn's user).
MessageReader = Callable[[Sequence[TurnRef]], Awaitable[dict[TurnRef, str]]]


@dataclass
class FunctionContext:
    """What a `function:` agent receives: the turn so far, as plain data."""

    message: str
    user: str
    session: str
    turn: int
    inputs: dict[str, Any]  # outputs of the agents it reads that succeeded
    missing: list[str]  # agents it reads that failed or were skipped
    memory: dict[str, Any]  # latest earlier outputs of the agents it lists under `memory`
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    # What the caller of the turn passed (`run_turn(..., options=...)`), e.g. the factory's --force.
    options: dict[str, Any] = field(default_factory=dict)
    # The runtime running the turn, for functions that run turns of their own (the factory's
    # tester runs the agent it tests on the same instances) or deploy what they made.
    runtime: Runtime | None = None
    turn_id: int = 0  # the turn's id in the store (`turn` is its number in the session)
    iteration: int = 0  # within a pipeline's loop: 1, 2, ...
    read_messages: MessageReader | None = None  # what `messages` reads with, beyond this turn's

    async def messages(self, turns: Sequence[TurnRef]) -> dict[TurnRef, str]:
        """The person's message of each of these turns of theirs (any of their sessions),
        as stored: what a quotation citing one is checked against. This turn's is at hand;
        the others take one store read. A turn they do not have is absent."""
        here = TurnRef(self.session, self.turn)
        found = {here: self.message} if here in turns else {}
        others = [t for t in dict.fromkeys(turns) if t != here]
        if others and self.read_messages is not None:
            found.update(await self.read_messages(others))
        return found

    def conflict(self, **details: Any) -> None:
        """Record a contradiction between agents; it is stored, emitted and shown in the turn."""
        self.conflicts.append(details)


@dataclass
class CheckContext(FunctionContext):
    """What an agent's `check` receives: the turn so far plus the model's validated reply."""

    output: Any = None  # None when the regenerated reply did not even validate
    last_chance: bool = False  # True after the one regeneration: return a safe output, do not raise
    instance: str = ""  # the instance that served the reply, and its `model` string: a check may
    model: str | None = None  # trust a model's judgement according to the model (coaching's risk cap)
