"""Honest status on the embedded model: the README's first example, run as written, and a
pipeline `cantata new` wrote have no prompt scaffolding in any reply, and every reply the
model looped in is cut and marked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cantata.bundled import load as load_bundled
from cantata.config import DEFAULT_CONFIG
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.prompts import SCAFFOLD_STOPS
from cantata.repetition import find_repetition
from cantata.runtime import Cantata
from cantata.scaffold import scaffold
from tests.test_scaffold import MESSAGE as SCAFFOLD_MESSAGE

pytestmark = pytest.mark.embedded

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_first_example() -> tuple[str, str]:
    """The pipeline and message of the README's first `cantata run` line."""
    found = re.search(r'^cantata run (\S+) --message "([^"]+)"', README.read_text(), re.MULTILINE)
    assert found is not None, 'the README has no `cantata run NAME --message "..."` example'
    return found.group(1), found.group(2)


def strings(value: object) -> list[str]:
    """Every text in an output: itself, or the string values of a structured one."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [text for item in value for text in strings(item)] if isinstance(value, list) else []


@pytest.mark.parametrize("source", ["readme", "new"])
async def test_the_readmes_first_example_and_a_new_pipeline_echo_no_scaffolding_and_mark_every_loop(
    source: str, home: Path, tmp_path: Path
) -> None:
    if source == "readme":
        name, message = readme_first_example()
        pipeline = load_bundled(name)
    else:  # what `cantata new` writes, on the message its YAML suggests
        pipeline, message = load_pipeline(scaffold("habits", tmp_path)[0] / "pipeline.yaml"), SCAFFOLD_MESSAGE
    streamed: dict[str, str] = {}  # each agent's text as the model wrote it (its last attempt)

    def listen(event: Event) -> None:
        if event.agent and event.type == "agent_retry":
            streamed[event.agent] = ""
        if event.agent and event.type == "agent_token":
            streamed[event.agent] = streamed.get(event.agent, "") + str(event.data["text"])

    app = Cantata(DEFAULT_CONFIG, home=home)
    try:
        turn = await app.run_turn(pipeline, message, on_event=listen)
    finally:
        await app.close()
    assert turn.early is not None and turn.final is not None, turn.as_json()
    texts = [turn.early.text, turn.final.text, *(t for a in turn.agents for t in strings(a.output))]
    for text in texts:
        assert not any(stop in "\n" + text for stop in SCAFFOLD_STOPS), text
    for agent in turn.agents:
        if agent.status != "ok" or not isinstance(agent.output, str):
            continue
        assert find_repetition(agent.output) is None, agent.output
        if find_repetition(streamed[agent.name]) is not None:
            assert any(note.startswith("repeated one sentence") for note in agent.quality), agent
        if agent.quality:
            assert turn.quality.repaired[agent.name] == agent.quality
    delivered = [turn.early.agent, turn.final.agent]
    assert turn.quality.replies_repaired == all(name in turn.quality.repaired for name in delivered)
    print(f"\nrepaired on the embedded model ({source}): {json.dumps(turn.quality.repaired, indent=1)}")
