"""A turn as an OpenAI chat-completion stream.

Every `data:` line is a `ChatCompletionChunk` (protocol.py), so the openai client and its
users never break. The early reply's text streams as `delta.content`, then the merged
reply; each text chunk says which reply it belongs to in `cantata.phase` ("early",
"merged"), so a client that shows them apart never splits text. A plain client sees one
text: the early reply, a blank line (a chunk of phase "separator"), the merged reply.
The other agents' progress rides in `cantata` on chunks whose delta is empty. Long
silences get an SSE comment, which clients ignore and proxies take as life.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Literal

from cantata.events import Event
from cantata.server.openai_shapes import turn_info, usage
from cantata.server.protocol import (
    ChatCompletionChunk,
    ChunkChoice,
    ChunkInfo,
    DeltaMessage,
    Phase,
    ProgressInfo,
    StatusData,
    StatusEvent,
    TextInfo,
    TurnErrorInfo,
    TurnStartInfo,
    Usage,
)
from cantata.server.service import STOPPED, TurnHandle
from cantata.turn import TurnResult

SEPARATOR = "\n\n"  # between the early and the merged reply, for clients that show one text
HEARTBEAT_S = 5.0
PROGRESS = (
    "agent_queued",
    "agent_started",
    "agent_retry",
    "agent_finished",
    "agent_failed",
    "agent_skipped",
    "conflict",
)


class JsonText:
    """The text inside a streaming JSON object's string values, as it arrives: a model
    asked for `{"reflection": "...", "question": "..."}` shows only the words. Values are
    joined by a space, as the reply built from them is. Plain text passes through."""

    def __init__(self, *, structured: bool) -> None:
        self.mode = "json" if structured else "text"
        self.in_string = False
        self.is_value = False
        self.escape = ""
        self.values_seen = 0
        self.depth_colon = False  # a ':' was seen since the last string: the next string is a value

    def feed(self, chunk: str) -> str:
        if self.mode == "text":
            return chunk
        out: list[str] = []
        for ch in chunk:
            if self.in_string:
                if self.escape:
                    self.escape += ch
                    if self.escape[:2] == "\\u":
                        if len(self.escape) == 6:
                            if self.is_value:
                                out.append(_unicode(self.escape))
                            self.escape = ""
                        continue
                    if self.is_value:
                        out.append({"n": "\n", "t": "\t", "r": "", "b": "", "f": ""}.get(ch, ch))
                    self.escape = "" if ch != "u" else self.escape
                    continue
                if ch == "\\":
                    self.escape = "\\"
                elif ch == '"':
                    self.in_string = False
                    self.depth_colon = False
                elif self.is_value:
                    out.append(ch)
                continue
            if ch == '"':
                self.in_string = True
                self.is_value = self.depth_colon
                if self.is_value and self.values_seen:
                    out.append(" ")
                if self.is_value:
                    self.values_seen += 1
            elif ch == ":":
                self.depth_colon = True
            elif ch in ",{":
                self.depth_colon = False
        return "".join(out)


def _unicode(escape: str) -> str:
    try:
        return chr(int(escape[2:], 16))
    except ValueError:
        return ""


def sse(chunk: ChatCompletionChunk) -> str:
    return f"data: {chunk.model_dump_json(exclude_unset=True)}\n\n"


class ChatStream:
    def __init__(self, handle: TurnHandle, *, model: str, started: Event, status_events: bool) -> None:
        self.handle = handle
        self.model = model
        self.session = started.session_id
        self.turn_id = started.turn_id
        self.id = f"chatcmpl-{self.turn_id}"
        self.created = int(time.time())
        self.status_events = status_events
        early = handle.pipeline.deliverer("early")
        self.early_agent = early.name if early else None
        self.structured = early is not None and handle.pipeline.contracts.get(early.name) is not None
        self.total = len(handle.pipeline.order)
        self.done: set[str] = set()
        self.sent_early = ""
        self.text = JsonText(structured=self.structured)

    def chunk(
        self,
        delta: DeltaMessage,
        *,
        finish: Literal["stop"] | None = None,
        info: ChunkInfo | None = None,
        status: StatusData | None = None,
        used: Usage | None = None,
    ) -> str:
        """One chunk; only what is given is sent (besides what OpenAI requires)."""
        body = ChatCompletionChunk(
            id=self.id,
            object="chat.completion.chunk",
            created=self.created,
            model=self.model,
            choices=[ChunkChoice(index=0, delta=delta, finish_reason=finish)],
        )
        if info is not None:
            body.cantata = info
        if status is not None and self.status_events:
            body.event = StatusEvent(type="status", data=status)
        if used is not None:
            body.usage = used
        return sse(body)

    def text_chunk(self, text: str, phase: Phase) -> str:
        return self.chunk(DeltaMessage(content=text), info=TextInfo(phase=phase))

    async def __aiter__(self) -> AsyncIterator[str]:
        start = TurnStartInfo(
            event="turn_started", session=self.session, turn_id=self.turn_id, done=0, total=self.total
        )
        yield self.chunk(DeltaMessage(role="assistant", content=""), info=start)
        queue = self.handle.events
        finished = False
        while not finished:
            batch: list[Event | None] = []
            if queue.empty():
                try:
                    batch.append(await asyncio.wait_for(queue.get(), timeout=HEARTBEAT_S))
                except TimeoutError:
                    yield ": still working\n\n"
                    continue
            # Everything that arrived meanwhile goes out in one write, not one per event.
            while not queue.empty():
                batch.append(queue.get_nowait())
            pieces: list[str] = []
            for event in batch:
                if event is None:
                    finished = True
                    break
                pieces.extend(self.on_event(event))
            if pieces:
                yield "".join(pieces)
        assert self.handle.task is not None
        result: TurnResult | None = None
        error: str | None = None
        if self.handle.task.cancelled():  # cut at shutdown: it resumes at the next start
            error = STOPPED
        else:
            try:
                result = self.handle.task.result()
            except Exception as exc:  # the turn broke after it started: say so in a valid chunk
                error = str(exc) or type(exc).__name__
        for piece in self.ending(result, error):
            yield piece
        yield "data: [DONE]\n\n"

    def on_event(self, event: Event) -> list[str]:
        out: list[str] = []
        if event.type == "agent_token" and event.agent == self.early_agent:
            text = self.text.feed(str(event.data.get("text", "")))
            if text:
                self.sent_early += text
                out.append(self.text_chunk(text, "early"))
        elif event.type == "agent_retry" and event.agent == self.early_agent:
            self.text = JsonText(structured=self.structured)  # the next attempt's text starts afresh
        elif event.type == "early_delivered":
            delivered = str(event.data.get("text", ""))
            if delivered.startswith(self.sent_early):
                rest = delivered[len(self.sent_early) :]
            else:  # what streamed was not what was kept (a retry or repair): show the kept one
                rest = ("\n\n" if self.sent_early else "") + delivered
            if rest:
                self.sent_early += rest
                out.append(self.text_chunk(rest, "early"))
        if event.type in PROGRESS:
            if event.type in ("agent_finished", "agent_failed", "agent_skipped") and event.agent:
                self.done.add(event.agent)
            info = ProgressInfo(
                event=event.type, agent=event.agent, at_s=round(event.at_s, 3), done=len(self.done), total=self.total
            )
            if event.type == "conflict":
                info.data = event.data
            status = StatusData(
                description=f"{event.agent}: {event.type.removeprefix('agent_')} ({len(self.done)}/{self.total} done)",
                done=False,
            )
            out.append(self.chunk(DeltaMessage(), info=info, status=status))
        return out

    def ending(self, result: TurnResult | None, error: str | None) -> list[str]:
        out: list[str] = []
        if result is not None and result.final is not None and result.final.text:
            if self.sent_early:
                out.append(self.text_chunk(SEPARATOR, "separator"))
            out.append(self.text_chunk(result.final.text, "merged"))
        info: ChunkInfo = TurnErrorInfo(error=error, session=self.session, turn_id=self.turn_id)
        used = None
        if result is not None:
            info, used = turn_info(result), usage(result)
        waiting = result is not None and result.status == "waiting"  # cantata.approvals says on what
        done = StatusData(description="waiting for a person's approval" if waiting else "done", done=True)
        out.append(self.chunk(DeltaMessage(), finish="stop", info=info, status=done, used=used))
        return out
