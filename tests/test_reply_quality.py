"""Honest status: replies that echo the prompt's headings are cut at a stop sequence, a
repeated sentence is cut to its first occurrence, and the turn says when its replies came
from such repairs (`--json`, /api/turns/{id}); on the scripted backend with canned replies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cantata.backends.base import CompletionRequest, Message
from cantata.backends.stops import StopScanner
from cantata.bundled import load as load_bundled
from cantata.cli import SMOKE_TEST_NOTE, _say_if_smoke_test_model
from cantata.config import DEFAULT_CONFIG, load_config
from cantata.pipelines.example.models import Reading
from cantata.prompts import SCAFFOLD_STOPS, build_briefing, build_messages
from cantata.repetition import find_repetition
from cantata.runtime import Cantata
from cantata.store import EntryRow, PastTurn
from cantata.structured import contract_from_model
from cantata.text_check import StreamGate, check_text
from cantata.turn import TurnResult
from tests.helpers.pipelines import WriteFile, canned_config
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.test_cli import cantata
from tests.test_openai_backend import MESSAGES, Server, backend_for, collect, delta, sse, usage_event

WALK = "Try a short walk after lunch."
LOOP = "You want to move a little more each day."


def canned(write: WriteFile, **replies: str) -> Path:
    """The example pipeline's named agents reply as given, on the scripted backend."""
    return canned_config(write, replies)


async def example_turn(config: Path, home: Path) -> TurnResult:
    app = Cantata(load_config(config), home=home)
    try:
        return await app.run_turn(load_bundled("example"), "I keep scrolling instead of going to the gym.")
    finally:
        await app.close()


# -- the stop sequences ----------------------------------------------------------------------


def test_every_heading_the_prompt_builder_writes_is_a_stop_sequence() -> None:
    """One source of truth: a heading added to the prompt is a stop at once."""
    briefing = build_briefing(
        preamble="You help one person.",
        memory={"persona": EntryRow(turn_id=1, agent="persona", status="ok", output={"tone": "warm"}, error=None)},
        summary="They walked twice.",
        past_turns=[PastTurn(turn_id=1, number=1, user_message="hi", reply="hello")],
        message="I keep scrolling.",
        budget=4096,
        count=lambda text: len(text) // 4,
    )
    messages = build_messages(
        briefing=briefing,
        agent="answer",
        instructions="Reply.",
        inputs={"read": {"feeling": "sad"}},
        missing=["quick"],
        contract=contract_from_model(Reading),
    )
    headings = [line for m in messages for line in m.content.splitlines() if re.match(r"## \S", line)]
    assert len(headings) == 7  # summary, earlier turns, memory, new message, other outputs, role, output
    for heading in headings:
        assert any(("\n" + heading).startswith(stop) for stop in SCAFFOLD_STOPS), heading


def test_the_scanner_holds_back_a_heading_split_across_pieces_and_never_emits_it() -> None:
    scanner = StopScanner(SCAFFOLD_STOPS)
    emitted = [scanner.feed(piece) for piece in (WALK + "\n", "#", "# Out", "put\nReply in plain text.")]
    assert "".join(emitted) + scanner.flush() == WALK
    assert scanner.matched == "\n## Output"
    assert "#" not in "".join(emitted)
    free = StopScanner(SCAFFOLD_STOPS)
    text = "".join(free.feed(piece) for piece in ("A\n#", "# Heading of its own\n", "more")) + free.flush()
    assert text == "A\n## Heading of its own\nmore" and free.matched is None


async def test_a_scripted_reply_that_echoes_the_prompt_is_cut_and_the_turn_says_so(
    write: WriteFile, home: Path
) -> None:
    config = canned(write, quick=f"{WALK}\n\n## Output\nReply in plain text.", answer="A walk is a good start.")
    turn = await example_turn(config, home)
    agents = {a.name: a for a in turn.agents}
    assert turn.status == "ok" and turn.early is not None and turn.early.text == WALK
    assert agents["quick"].finish_reason == "stop"
    assert agents["quick"].quality == ["cut where it began to echo the prompt's heading '## Output'"]
    assert agents["answer"].quality == [] and agents["read"].quality == []
    assert turn.quality.repaired == {"quick": agents["quick"].quality}
    assert not turn.quality.replies_repaired  # the final reply is the model's own
    assert turn.quality.note == "Cantata's checks repaired the replies of quick"


async def test_a_repeated_sentence_is_cut_to_its_first_occurrence_and_marked(write: WriteFile, home: Path) -> None:
    config = canned(write, quick=f"## Your role: quick\n{WALK}", answer=f"{LOOP} " * 4)
    turn = await example_turn(config, home)
    agents = {a.name: a for a in turn.agents}
    assert turn.early is not None and turn.early.text == WALK
    assert turn.final is not None and turn.final.text == LOOP
    assert agents["quick"].quality == ["opened with the prompt's heading '## Your role: quick': removed"]
    assert agents["answer"].quality == [f"repeated one sentence 4 times ({LOOP!r}): cut to its first occurrence"]
    assert turn.quality.replies_repaired
    assert turn.quality.note is not None and turn.quality.note.startswith(
        "every reply of this turn was repaired by Cantata's checks (quick, answer)"
    )


async def test_a_reply_that_is_only_a_heading_fails_as_empty_not_ok(write: WriteFile, home: Path) -> None:
    turn = await example_turn(canned(write, quick="## Output"), home)
    quick = next(a for a in turn.agents if a.name == "quick")
    assert quick.status == "failed" and quick.error == "the model returned an empty reply"


@pytest.mark.parametrize(
    ("text", "count", "kept"),
    [
        (f"{LOOP}\n\n" * 8, 8, LOOP),
        # Case and end marks are ignored; what came before the sentence came back is kept.
        (f"{LOOP} {WALK} {LOOP.upper()} {LOOP.rstrip('.')}!", 3, f"{LOOP} {WALK}"),
        (f"{LOOP} {LOOP}", 2, LOOP),  # twice, and all of the reply
        ("Thank you. Thank you. Thank you.", None, None),  # too short to be a loop
        (f"{LOOP} {WALK} Then see how the evening feels, and write it down. {LOOP}", None, None),  # a small part
        ("A first thought.\nA second thought.\nA third thought.", None, None),
    ],
)
def test_the_repetition_rule(text: str, count: int | None, kept: str | None) -> None:
    found = find_repetition(text)
    assert (found.count if found else None) == count
    repaired, notes = check_text(text)
    assert repaired == (kept or text.strip()) and len(notes) == (1 if found else 0)
    assert find_repetition(repaired) is None


REPLIES = [
    f"{LOOP}\n\n" * 8,
    f"  {LOOP} {WALK} {LOOP} {LOOP}\n",
    f"You want to move. You want to eat well. {WALK}",  # begins like an earlier sentence, then not
    f"{LOOP} {WALK} Then see how the evening feels, and write it down. {LOOP}",  # twice, kept whole
    "Hi.\n\nThere it is.",
    f"## Your role: quick\n\n{WALK} {LOOP} {LOOP} {LOOP}",  # a heading line, then a loop
    f" ## Output\n## Your role: quick\n{WALK}",
    "## Out of ideas? Try a walk.",  # begins like a heading, is not one
    "## Output",  # nothing but a heading: nothing is kept
    "#",
]


@pytest.mark.parametrize("text", REPLIES)
@pytest.mark.parametrize("size", [1, 4, 7, 1000])
def test_what_streams_is_exactly_what_the_check_keeps(text: str, size: int) -> None:
    gate = StreamGate()
    released = ""
    for at in range(0, len(text), size):
        released += gate.feed(text[at : at + size])
        assert check_text(text)[0].startswith(released)  # never more than is kept, at any moment
    assert released + gate.flush() == check_text(text)[0]


async def test_the_early_reply_streams_no_heading_or_loop_that_is_then_cut(write: WriteFile, home: Path) -> None:
    config = canned_config(write, {"quick": f"## Your role: quick\n{WALK} {LOOP} {LOOP} {LOOP}"}, tokens_per_s=2000)
    streamed: list[str] = []
    app = Cantata(load_config(config), home=home)
    try:
        turn = await app.run_turn(
            load_bundled("example"),
            "I skip the gym.",
            on_event=lambda e: (
                streamed.append(e.data["text"]) if e.type == "agent_token" and e.agent == "quick" else None
            ),
        )
    finally:
        await app.close()
    assert len(streamed) > 5  # it did stream, piece by piece
    assert turn.early is not None and "".join(streamed) == turn.early.text == f"{WALK} {LOOP}"


# -- in the API, the CLI and the OpenAI-compatible backend -------------------------------------


async def test_finish_reason_and_quality_show_in_the_api(write: WriteFile, home: Path) -> None:
    # quick has max_tokens 60 (240 characters on the scripted backend): this reply is cut there.
    long = " ".join(f"Step {n}: put the phone in another room before the gym." for n in range(1, 9))
    # read has max_tokens 120 (480 characters): its JSON is cut there, and it fails saying so.
    cut_json = json.dumps({"feeling": "hopeful", "intensity": 2, "reply": "A walk. " * 80})
    config = canned(write, quick=long, read=cut_json, answer=f"{LOOP} " * 3)
    async with running(make_app(config, home)) as app, client(app) as c:
        info = (await c.post("/v1/chat/completions", json=chat_body("I skip the gym"))).json()["cantata"]
        turn = (await c.get(f"/api/turns/{info['turn_id']}")).json()
    agents = {a["name"]: a for a in turn["agents"]}
    assert agents["quick"]["finish_reason"] == "length" and agents["quick"]["quality"] == []
    assert agents["read"]["status"] == "failed" and agents["read"]["finish_reason"] == "length"
    assert "cut at max_tokens=120" in agents["read"]["error"]
    assert agents["screen"]["finish_reason"] is None  # a function
    assert agents["answer"]["quality"] == [f"repeated one sentence 3 times ({LOOP!r}): cut to its first occurrence"]
    assert turn["quality"] == info["quality"]
    assert turn["quality"]["repaired"] == {"answer": agents["answer"]["quality"]}
    assert turn["final"]["text"] == LOOP


def test_cantata_run_prints_what_was_repaired_and_says_nothing_of_a_smoke_test_model_on_scripted(
    write: WriteFile,
) -> None:
    config = canned(write, answer=f"{LOOP} " * 3)
    done = cantata("run", "example", "-m", "I skip the gym", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "quality: Cantata's checks repaired the replies of answer" in done.stdout
    assert re.search(r"answer +ok .*; repaired: repeated one sentence 3 times", done.stdout)
    assert SMOKE_TEST_NOTE not in done.stderr


def test_the_bundled_embedded_model_is_named_a_smoke_test_model(capsys: pytest.CaptureFixture[str]) -> None:
    _say_if_smoke_test_model(DEFAULT_CONFIG, load_bundled("example"))
    err = capsys.readouterr().err
    assert err.strip() == SMOKE_TEST_NOTE and '"From the embedded model to vLLM"' in err


async def test_vllm_gets_the_stops_and_names_the_one_that_ended_the_reply() -> None:
    ended = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "stop_reason": "\n## Output"}]}
    stream = sse(delta(WALK), ended, usage_event(10, 5))
    server = Server(stream)
    backend = backend_for(server)
    chunks = await collect(backend, CompletionRequest(MESSAGES, stop=SCAFFOLD_STOPS, thinking=False))
    await collect(backend, CompletionRequest(MESSAGES, stop=SCAFFOLD_STOPS))
    await backend.close()
    # A model that may think gets no stops: vLLM would match them in its reasoning too.
    assert [body.get("stop") for body in server.bodies()] == [list(SCAFFOLD_STOPS), None]
    assert "".join(c.text for c in chunks) == WALK
    assert chunks[-1].finish_reason == "stop" and chunks[-1].stop == "\n## Output"


async def test_llama_cpp_python_replies_are_cut_here_and_the_response_closed() -> None:
    # That server would stop at a stop sequence without saying so: the stops are not sent,
    # the reply is cut by the backend, and nothing after the heading is read.
    pieces = [WALK, "\n\n#", "# Output\n", "Reply in plain text."]
    server = Server(sse(*[delta(p) for p in pieces], delta(finish="length"), usage_event(10, 40)))
    backend = backend_for(server, dialect="llama-cpp-python")
    chunks = await collect(backend, CompletionRequest(MESSAGES, stop=SCAFFOLD_STOPS))
    await backend.close()
    assert "stop" not in server.bodies()[0]
    assert "".join(c.text for c in chunks) == WALK + "\n"
    assert chunks[-1].finish_reason == "stop" and chunks[-1].stop == "\n## Output"


async def test_a_reply_without_a_heading_is_passed_whole_by_every_backend_path() -> None:
    text = "Line one.\n# Not ours\n## Notes of its own"
    server = Server(sse(*[delta(c) for c in text], delta(finish="stop")))
    backend = backend_for(server, dialect="llama-cpp-python")
    chunks = await collect(backend, CompletionRequest([Message("user", "hi")], stop=SCAFFOLD_STOPS))
    await backend.close()
    assert "".join(c.text for c in chunks) == text and chunks[-1].stop is None
