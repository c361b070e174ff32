"""The terminal chat: the early reply as soon as it exists, a live line of the other
agents, then the merged reply. `/new`, `/memory`, `/forget`, `/quit`. A tool call that needs a
person's approval is asked about here (approve, or deny with a reason the model reads)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import IO

from cantata.applications import forgetters
from cantata.errors import UserError
from cantata.events import Event
from cantata.loader import Pipeline
from cantata.runtime import Cantata
from cantata.turn import TurnResult

HELP = "Commands: /new (new session), /memory (what Cantata keeps about you), /forget (delete it), /quit"

SYMBOLS = {"queued": "…", "running": "▸", "ok": "✓", "failed": "✗", "skipped": "-"}


class TerminalChat:
    def __init__(self, app: Cantata, pipeline: Pipeline, *, user: str, session: str | None, out: IO[str]) -> None:
        self.app = app
        self.pipeline = pipeline
        self.user = user
        self.session = session
        self.out = out
        self.live = out.isatty()
        self.states: dict[str, str] = {}
        self.source: IO[bytes] | None = None

    def say(self, text: str) -> None:
        self.clear_line()
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self, source: IO[bytes]) -> None:
        self.say(f"Cantata chat on '{self.pipeline.name}' as {self.user}. {HELP}")
        self.source = source
        if self.session is not None:  # a turn of it may wait for this person
            waiting = await self.app.store.approvals(session_id=self.session, pending=True)
            for turn_id in sorted({approval.turn_id for approval in waiting}):
                await self.settle(turn_id)
        while True:
            line = await self.read("you> ")
            if line is None:
                break
            if not line:
                continue
            if line.startswith("/"):
                if not await self.command(line):
                    break
                continue
            try:
                await self.turn(line)
            except UserError as exc:
                self.say(f"error: {exc}")

    async def read(self, prompt: str) -> str | None:
        """The next line the person types (None at the end of input)."""
        assert self.source is not None
        if self.live:
            self.out.write(prompt)
            self.out.flush()
        raw = await asyncio.get_running_loop().run_in_executor(None, self.source.readline)
        # A user's bytes never crash the chat: invalid UTF-8 is replaced.
        return raw.decode("utf-8", errors="replace").strip() if raw else None

    async def command(self, line: str) -> bool:
        name = line.split()[0].lower()
        if name in ("/quit", "/exit"):
            return False
        if name == "/new":
            self.session = None
            self.say("(a new session starts with your next message)")
        elif name == "/memory":
            await self.show_memory()
        elif name == "/forget":
            forgotten = await self.app.forget_user(self.user, forgetters())
            self.session = None
            self.say(f"(deleted everything Cantata kept about {self.user}: {forgotten.sessions} sessions)")
        else:
            self.say(HELP)
        return True

    async def show_memory(self) -> None:
        store = self.app.store
        memory = await store.latest_outputs(self.user, self.pipeline.memory_agents, before_turn=2**62)
        sessions = await store.sessions(self.user)
        self.say(f"Cantata keeps {len(sessions)} session(s) for {self.user}.")
        if not memory:
            self.say("No memory from earlier turns yet.")
        for agent, entry in memory.items():
            self.say(f"{agent} (turn {entry.turn_id}): {json.dumps(entry.output, ensure_ascii=False)}")

    async def turn(self, message: str) -> None:
        self.states = {}
        result = await self.app.run_turn(
            self.pipeline, message, user=self.user, session_id=self.session, on_event=self.on_event
        )
        self.session = result.session
        if result.status == "waiting":
            await self.settle(result.turn_id)
        else:
            self.report(result)

    async def settle(self, turn_id: int) -> None:
        """A waiting turn: ask about its approvals, resume it, and so on until it finishes."""
        while await self.decide(turn_id):
            result = await self.app.resume(self.pipeline, turn_id, on_event=self.on_event, wait=True)
            if result.status != "waiting":
                self.report(result)
                return
        self.say(f"(turn {turn_id} waits for approval; decide it here or at /api/approvals)")

    def report(self, result: TurnResult) -> None:
        if result.final:
            self.say(f"{result.final.agent}: {result.final.text}")
        failed = [a.name for a in result.agents if a.status != "ok"]
        if failed:
            self.say(f"({result.status}: {', '.join(failed)} did not finish)")
        if result.quality.note:
            self.say(f"(quality: {result.quality.note})")

    async def decide(self, turn_id: int) -> bool:
        """Ask the person about each pending approval of the turn; True once all are decided."""
        for approval in await self.app.store.approvals(turn_id=turn_id, pending=True):
            arguments = json.dumps(approval.arguments, ensure_ascii=False)
            self.say(f"{approval.agent} would call {approval.tool}({arguments}) [approval {approval.id}]")
            answer = await self.read("approve? [y/N] ")
            if answer is None:
                return False
            approved = answer.lower() in ("y", "yes")
            reason = None if approved else await self.read("reason, for the model (optional)> ")
            await self.app.decide(approval.id, approved=approved, reason=reason or None, by=self.user)
            self.say(f"({'approved' if approved else 'denied'})")
        return True

    def on_event(self, event: Event) -> None:
        if event.type == "early_delivered":
            self.say(f"{event.agent}: {event.data['text']}")
            return
        state = {
            "agent_queued": "queued",
            "agent_started": "running",
            "agent_finished": "ok",
            "agent_failed": "failed",
            "agent_skipped": "skipped",
        }.get(event.type)
        if state and event.agent:
            self.states[event.agent] = state
            self.draw_line()

    def draw_line(self) -> None:
        if not self.live:
            return
        parts = [f"{SYMBOLS[s]} {name}" for name, s in self.states.items()]
        self.out.write("\r\x1b[K[" + "  ".join(parts) + "]")
        self.out.flush()

    def clear_line(self) -> None:
        if self.live:
            self.out.write("\r\x1b[K")


async def run_chat(app: Cantata, pipeline: Pipeline, *, user: str, session: str | None) -> None:
    chat = TerminalChat(app, pipeline, user=user, session=session, out=sys.stdout)
    try:
        await chat.run(sys.stdin.buffer)
    finally:
        await app.close()
