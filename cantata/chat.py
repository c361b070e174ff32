"""The terminal chat: the early reply as soon as it exists, a live line of the other
agents, then the merged reply. `/new`, `/memory`, `/forget`, `/quit`."""

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

    def say(self, text: str) -> None:
        self.clear_line()
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self, source: IO[bytes]) -> None:
        self.say(f"Cantata chat on '{self.pipeline.name}' as {self.user}. {HELP}")
        loop = asyncio.get_running_loop()
        while True:
            if self.live:
                self.out.write("you> ")
                self.out.flush()
            raw = await loop.run_in_executor(None, source.readline)
            if not raw:
                break
            # A user's bytes never crash the chat: invalid UTF-8 is replaced.
            line = raw.decode("utf-8", errors="replace").strip()
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
        if result.final:
            self.say(f"{result.final.agent}: {result.final.text}")
        failed = [a.name for a in result.agents if a.status != "ok"]
        if failed:
            self.say(f"({result.status}: {', '.join(failed)} did not finish)")
        if result.quality.note:
            self.say(f"(quality: {result.quality.note})")

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
