"""A turn as a tool, wherever one is offered (an agent's `agent:` and `pipeline:` tools,
`cantata mcp` and `/mcp`): what it takes (a message and, to continue a conversation, the
session of an earlier result) and what it answers (the merged reply, with the early one, the
turn and the session)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cantata.errors import ToolError
from cantata.turn import TurnResult

MAX_MESSAGE = 1 << 20  # characters, as the server's body limit (1 MiB) bounds a chat message


class TurnToolInput(BaseModel):
    """What a turn tool takes (its JSON Schema is the tool's input schema)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=MAX_MESSAGE, description="The user's message to the team.")
    session: str | None = Field(
        None,
        min_length=1,
        description="To continue a conversation: the `session` of an earlier result of this tool. Omit it to"
        " start a new one.",
    )


class TurnToolOutput(BaseModel):
    """What a turn tool answers."""

    reply: str = Field(description="The merged reply (the early one if the merging agent failed).")
    early: str | None = Field(description="The early reply, sent at once while the others worked.")
    merged: str | None = Field(description="The merged reply, none if its agent failed.")
    status: str = Field(description="ok, degraded (an agent failed; the reply stands) or failed.")
    session: str = Field(description="Pass it back as `session` to continue the conversation.")
    turn: int = Field(description="The turn's number in its session, from 1.")
    turn_id: int = Field(description="The stored turn (GET /api/turns/{turn_id} on `cantata serve`).")


INPUT_SCHEMA = TurnToolInput.model_json_schema()
OUTPUT_SCHEMA = TurnToolOutput.model_json_schema()


def turn_output(result: TurnResult) -> TurnToolOutput:
    """The answer to a turn tool's call; a ToolError saying why when the turn gave no reply."""
    merged = result.final.text if result.final else None
    early = result.early.text if result.early else None
    text = merged or early
    if not text:
        failed = "; ".join(f"{a.name}: {a.error}" for a in result.agents if a.status == "failed" and a.error)
        raise ToolError(f"the turn ended ({result.status}) without a reply" + (f" ({failed})" if failed else ""))
    return TurnToolOutput(
        reply=text,
        early=early,
        merged=merged,
        status=result.status,
        session=result.session,
        turn=result.turn,
        turn_id=result.turn_id,
    )
