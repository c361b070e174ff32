"""Where an agent's prompt is built: the shared briefing first, then the role's own part.

Every agent of a turn gets the same briefing, byte for byte (preamble, user memory,
recent turns, the new message; no timestamps, no per-agent words), so a backend that
caches prefixes (vLLM APC, llama.cpp) computes it once per turn instead of once per
agent. The budget cuts the briefing once per turn, never per agent.

The new message is the person's own words, so it goes in a user turn, never in the
system message: the system message holds the rest of the briefing, and the user message
opens with the new message, then the role's part. The shared prefix is still the whole
briefing (system message, then the user message up to the end of the new message).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cantata.backends.base import Message
from cantata.store.rows import EntryRow, PastTurn
from cantata.structured import OutputContract, format_instruction

TokenCounter = Callable[[str], int]

# The section headings this module writes into every prompt. A small model that runs past
# its answer often writes the next heading it saw ("## Output") and carries on with a
# prompt of its own, so each heading is also a stop sequence (SCAFFOLD_STOPS): one list,
# written here, so a heading added to the prompt is a stop at once.
SUMMARY = "## Summary of the conversation so far"
EARLIER = "## Earlier in this conversation"
MEMORY = "## What earlier turns recorded about this user (latest of each)"
NEW_MESSAGE = "## The new message"
OTHER_OUTPUTS = "## Outputs of other agents in this turn"
ROLE = "## Your role:"
OUTPUT = "## Output"
SCAFFOLD_HEADINGS = (SUMMARY, EARLIER, MEMORY, NEW_MESSAGE, OTHER_OUTPUTS, ROLE, OUTPUT)
# Each heading as the start of a line of the reply. The newline keeps a stop from ever
# matching inside a JSON string (where a newline is written "\\n"), and a reply that opens
# with a heading is left to the runtime's own check (model_call.py), which removes it.


def _stops(headings: tuple[str, ...]) -> tuple[str, ...]:
    """Each heading's fixed words ("## Your role" of "## Your role: coach"), at a line's
    start; a heading another one begins with ("## Outputs of ..." after "## Output") adds nothing."""
    fixed = sorted({heading.split(":")[0].split(" (")[0] for heading in headings})
    kept = [h for h in fixed if not any(h != other and h.startswith(other) for other in fixed)]
    return tuple("\n" + heading for heading in kept)


SCAFFOLD_STOPS = _stops(SCAFFOLD_HEADINGS)


@dataclass(frozen=True)
class Briefing:
    text: str  # the system message: preamble, summary, earlier turns, memory
    message: str  # the user message's opening: the new message (maybe cut), under its heading
    tokens: int  # of both
    dropped_turns: int
    message_cut: bool


def build_briefing(
    *,
    preamble: str,
    memory: dict[str, EntryRow],
    summary: str = "",
    past_turns: list[PastTurn],
    message: str,
    budget: int,
    count: TokenCounter,
    memory_view: dict[str, list[str]] | None = None,
) -> Briefing:
    """The shared part, cut to `budget` tokens: oldest turns go first, then the message is cut.

    Compaction (compaction.py) normally keeps the turns under budget by folding old ones
    into `summary` between turns; dropping turns here is the safety net within a turn.
    """
    turns = list(past_turns)
    dropped = 0

    shown = {
        agent: select(entry.output, (memory_view or {}).get(agent))
        for agent, entry in memory.items()
        if (memory_view or {}).get(agent) != []
    }

    def render() -> str:
        return _render(preamble, shown, summary, turns, dropped)

    opening = _opening(message)
    opening_tokens = count(opening)
    text = render()
    while count(text) + opening_tokens > budget and turns:
        turns.pop(0)
        dropped += 1
        text = render()
    cut = False
    tokens = count(text) + opening_tokens
    if tokens > budget:
        # Only the message itself is left to cut: keep its start, say that it was cut.
        overflow = tokens - budget
        keep_chars = max(0, int(len(message) * (1 - overflow / max(count(message), 1))) - 200)
        opening = _opening(message[:keep_chars] + "\n[The message was cut here to fit the context budget.]")
        tokens = count(text) + count(opening)
        cut = True
    return Briefing(text=text, message=opening, tokens=tokens, dropped_turns=dropped, message_cut=cut)


def _render(preamble: str, memory: dict[str, Any], summary: str, turns: list[PastTurn], dropped: int) -> str:
    """Oldest and most stable first: the preamble, then the summary and the earlier turns
    (which only grow from one turn to the next), then memory (rewritten every turn); the
    new message follows in the user message. Whatever the previous turn's calls left in a
    backend's prefix cache is then reused by this turn's first call too, not only within
    the turn."""
    parts = [preamble.strip()] if preamble.strip() else []
    if summary:
        parts.append(f"{SUMMARY}\n{summary.strip()}")
    if turns or dropped:
        lines = [EARLIER]
        if dropped:
            lines.append(f"({dropped} earlier turns omitted)")
        for turn in turns:
            lines.append(f"[turn {turn.number}] User: {turn.user_message}")
            if turn.reply:
                lines.append(f"[turn {turn.number}] Reply: {turn.reply}")
        parts.append("\n".join(lines))
    if memory:
        lines = [MEMORY]
        for agent, output in memory.items():
            lines.append(f"### {agent}\n{_as_text(output)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n" if parts else ""


def _opening(message: str) -> str:
    return f"{NEW_MESSAGE}\n{message}\n"


def build_messages(
    *,
    briefing: Briefing,
    agent: str,
    instructions: str,
    inputs: dict[str, Any],
    missing: list[str],
    contract: OutputContract | None,
) -> list[Message]:
    """The briefing as the system message; the user message opens with the new message
    (the same bytes for every agent), then the role's part.

    Within the role's part the upstream outputs come first, then the role: agents that
    read the same inputs (persona, plasticity and stability all read shadow) then share
    that prefix too, not only the briefing.
    """
    lines = [briefing.message]
    if inputs or missing:
        lines.append(OTHER_OUTPUTS)
        for name, output in inputs.items():
            lines.append(f"### {name}\n{_as_text(output)}")
        for name in missing:
            lines.append(f"### {name}\n(missing: this agent failed or was skipped)")
        lines.append("")
    lines += [f"{ROLE} {agent}", instructions.strip()]
    lines.append(f"\n{OUTPUT}\n" + format_instruction(contract))
    return [Message("system", briefing.text), Message("user", "\n".join(lines))]


def select(output: Any, fields: list[str] | None) -> Any:
    """A reader view of an output: only `fields` (dotted for nested ones), in their order;
    the whole output when `fields` is None or the output is not an object."""
    if fields is None or not isinstance(output, dict):
        return output
    view: dict[str, Any] = {}
    for path in fields:
        head, _, rest = path.partition(".")
        if head not in output:
            continue
        if rest:
            inner = select(output[head], [rest])
            if isinstance(inner, dict) and inner:
                view.setdefault(head, {}).update(inner)
        else:
            view[head] = output[head]
    return view


def reader_inputs(inputs: dict[str, Any], view: dict[str, list[str]]) -> dict[str, Any]:
    """What a reader's prompt shows of its inputs: its view of each ([] leaves one out)."""
    return {name: select(value, view.get(name)) for name, value in inputs.items() if view.get(name) != []}


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(_without_empty(output), ensure_ascii=False, sort_keys=True)


def _without_empty(value: Any) -> Any:
    """Drop empty fields (null, "", [], {}) from what a model reads: they say nothing and cost tokens."""
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value
