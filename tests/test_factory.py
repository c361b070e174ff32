"""The agent factory on the scripted backend with canned replies: deterministic whole runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from cantata import bundled as pipelines
from cantata import sandbox
from cantata.config import load_config
from cantata.events import Event
from cantata.factory import registry
from cantata.factory.board import task_board
from cantata.factory.outcome import BIGGER_MODEL, outcome_lines
from cantata.factory.run import task_json
from cantata.loader import load_pipeline
from cantata.pipelines.factory.models import Artefact, OutputField
from cantata.pipelines.factory.review import tool_findings
from cantata.pipelines.factory.roles import refusal
from cantata.runtime import Cantata
from cantata.store import SqliteStore
from tests.helpers.pipelines import WriteFile
from tests.helpers.stores import statements_during
from tests.test_cli import cantata

CANNED = Path(__file__).parent / "data" / "factory" / "action_items.yaml"
REQUEST = "an agent that extracts action items with owners and due dates from meeting notes"

needs_bwrap = pytest.mark.skipif(
    # CI runs `make test`, which installs bubblewrap: there a missing one must fail, not skip.
    sandbox.sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"bubblewrap unusable: {sandbox.sandbox_problem()}",
)


def canned_config(write: WriteFile) -> Path:
    return write("instances.yaml", f"instances:\n  - name: canned\n    backend: scripted\n    replies: {CANNED}\n")


@needs_bwrap
async def test_a_planted_failure_makes_the_fixer_iterate_and_the_fixed_agent_is_deployed(
    write: WriteFile, home: Path
) -> None:
    app = Cantata(load_config(canned_config(write)), home=home)
    events: list[Event] = []
    try:
        result = await app.run_turn(pipelines.load("factory"), REQUEST, on_event=events.append)
        history = await app.store.entry_history(result.turn_id)
        versions = await app.store.agent_versions("action-items")
        deployed = load_pipeline(await registry.pipeline_path(app.store, home, "agent:action-items"))
        run = await app.run_turn(deployed, "Ana sends the minutes by Tuesday.")
    finally:
        await app.close()
    assert result.status == "ok", [(a.name, a.status, a.error) for a in result.agents]
    assert result.early is not None and result.early.text.startswith("Building an agent:")
    deployment = next(a.output for a in result.agents if a.name == "deployer")
    assert deployment["deployed"] and deployment["version"] == 1 and not deployment["forced"]
    tests = [(e.iteration, e.output["dev_passed"], e.output["heldout_passed"]) for e in history if e.agent == "tester"]
    assert tests == [(1, 0, 0), (2, 3, 3)], "the first artefact failed every test, the fixed one passed them"
    fixes = [e.output["changes"] for e in history if e.agent == "fixer"]
    assert fixes[0].startswith("the output field is now") and fixes[1].startswith("nothing to change")
    assert [(e.data["iterations"], e.data["stopped"]) for e in events if e.type == "loop_finished"] == [(2, True)]
    # The held-out half never reached the fixer: its input carries counts, no held-out detail.
    first_report = next(e.output for e in history if e.agent == "tester" and e.iteration == 1)
    assert first_report["heldout_failed_ids"] == [2, 4, 6] and {r["half"] for r in first_report["dev_failures"]} == {
        "dev"
    }
    # Every artefact version is on disk, and the deployed one has its card, tests and task.
    assert (home / "factory" / f"turn-{result.turn_id}" / "iteration-1" / "agent" / "pipeline.yaml").exists()
    assert (home / "factory" / f"turn-{result.turn_id}" / "iteration-2" / "agent" / "pipeline.yaml").exists()
    folder = registry.version_dir(home, "action-items", 1)
    assert {"pipeline.yaml", "schema.json", "tool.py", "card.md", "tests.json", "task.json"} <= {
        p.name for p in folder.iterdir()
    }
    card = (folder / "card.md").read_text()
    assert "development: 3/3 passed" in card and "held-out: 3/3 passed" in card and "Cost to make:" in card
    task = json.loads((folder / "task.json").read_text())
    assert task["cost"]["iterations"] == 2 and "fixer@1" in task["cost"]["per_role"]
    assert [v.version for v in versions] == [1] and versions[0].summary["tests"] == "dev 3/3, held-out 3/3"
    # The deployed agent runs: its tool in the sandbox, then its model.
    assert run.status == "ok" and run.final is not None and "ana" in run.final.text
    tool_output = next(a.output for a in run.agents if a.name == "tool")
    assert tool_output == {"owners": ["Ana"]}


@pytest.mark.parametrize(
    ("request_text", "reason"),
    [
        ("an agent that browses the web and reports today's prices", "internet"),
        ("an agent that logs in to my bank account with my password", "credentials"),
        ("an agent that sends an email to every customer", "act on the world"),
        ("asdf", "empty or too short"),
        ("!!! ??? ### 1234 5678", "empty or too short"),
    ],
)
async def test_requests_cantata_cannot_build_stop_with_the_reason_and_no_deployment(
    write: WriteFile, home: Path, request_text: str, reason: str
) -> None:
    app = Cantata(load_config(canned_config(write)), home=home)
    try:
        result = await app.run_turn(pipelines.load("factory"), request_text)
        versions = await app.store.agent_versions()
    finally:
        await app.close()
    agents = {a.name: a for a in result.agents}
    assert agents["orchestrator"].attempts == 0, "refused in code, before any model ran"
    assert agents["analyst"].status == "skipped" and agents["builder"].status == "skipped"
    deployment = agents["deployer"].output
    assert not deployment["deployed"] and reason in deployment["reason"]
    assert result.final is not None and result.final.text.startswith("Not built:")
    assert versions == []
    assert outcome_lines(task_json(result), request_text)[0] == f"Not built: {deployment['reason']}."


def test_refusal_lets_ordinary_requests_through() -> None:
    for request in (REQUEST, "an agent that rates the tone of customer reviews from 1 to 5",
                    "an agent that counts the words and sentences of a paragraph"):  # fmt: skip
        assert refusal(request) is None, request


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("def run(value):\n    return open('/etc/passwd').read()\n", "uses 'open'"),
        ("import socket\ndef run(value):\n    return 1\n", "imports 'socket'"),
        ("from os import system\ndef run(value):\n    return 1\n", "imports from 'os'"),
        ("def run(value):\n    return ().__class__.__subclasses__()\n", "reaches into '__class__'"),
        ("def run(value:\n", "does not parse"),
        ("def other(value):\n    return 1\n", "no top-level run"),
    ],
)
def test_tool_code_that_may_not_run_is_a_blocking_finding(code: str, problem: str) -> None:
    findings = tool_findings(code)
    assert any(f.severity == "blocking" and problem in f.problem for f in findings), findings


def test_allowed_tool_code_has_no_finding() -> None:
    assert tool_findings("import re, json\nfrom collections import Counter\ndef run(value):\n    return 1\n") == []


def test_an_artefact_assembles_into_a_pipeline_that_loads(tmp_path: Path) -> None:
    from cantata.pipelines.factory.assembly import assemble

    artefact = Artefact(name="word-count", instructions="Count the words.", fields=[OutputField(name="words", type="integer")],
                        tool_code="def run(value):\n    return len(value['message'].split())\n")  # fmt: skip
    pipeline = assemble(artefact, tmp_path / "agent")
    assert pipeline.order == ["tool", "word_count"] and pipeline.deliverer("final") is not None
    schema = json.loads((tmp_path / "agent" / "schema.json").read_text())
    assert schema["required"] == ["words"] and schema["properties"]["words"]["type"] == "integer"


def test_the_planner_fits_the_factory_on_one_4090_in_at_most_four_instances() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "cantata", "plan", "--pipeline", "factory", "--hardware", "1x4090",
                           "--json"], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    placed = sorted(role for instance in plan["instances"] for role in instance["roles"])
    model_roles = sorted(a.name for a in pipelines.load("factory").spec.agents if not a.is_function)
    assert placed == model_roles and len(model_roles) == 7  # tester and deployer are code
    assert 1 <= len(plan["instances"]) <= 4


@pytest.mark.parametrize(
    ("reason", "refused"),
    [("has_field", False), ("it would need to browse the web for prices", True), ("", False)],
)
async def test_a_model_refusal_stands_only_for_a_reason_cantata_recognises(
    write: WriteFile, home: Path, reason: str, refused: bool
) -> None:
    canned = write(
        "canned.yaml", f"orchestrator: {{feasible: false, reason: {json.dumps(reason)}, goal: count words}}\n"
    )
    config = write("instances.yaml", f"instances:\n  - name: canned\n    backend: scripted\n    replies: {canned}\n")
    app = Cantata(load_config(config), home=home)
    try:
        result = await app.run_turn(pipelines.load("factory"), "an agent that counts the words of a paragraph")
    finally:
        await app.close()
    agents = {a.name: a for a in result.agents}
    assert agents["orchestrator"].output["feasible"] is (not refused)
    assert (agents["analyst"].status == "skipped") is refused


async def test_the_task_board_lists_factory_turns_with_their_progress_and_only_the_callers(
    write: WriteFile, home: Path
) -> None:
    from tests.helpers.server_app import chat_body, client, make_app, new_key, running

    ann, ben = await new_key(home, "ann"), await new_key(home, "ben")
    async with running(make_app(canned_config(write), home)) as app:
        async with client(app, ann) as as_ann, client(app, ben) as as_ben:
            await as_ann.post("/v1/chat/completions", json=chat_body(REQUEST, model="factory"))
            await as_ann.post("/v1/chat/completions", json=chat_body("asdf", model="factory"))
            await as_ann.post("/v1/chat/completions", json=chat_body("hi", model="example"))  # not a task
            board = (await as_ann.get("/api/tasks")).json()
            others = (await as_ben.get("/api/tasks")).json()
    refused, made = board["tasks"]  # newest first
    assert [made["request"], refused["request"]] == [REQUEST, "asdf"]
    assert made["status"] == "ok" and refused["status"] == "degraded"  # the refused one skipped the team
    assert made["role"] == refused["role"] == "deployer" and made["stage"] == "finished"
    assert made["tokens"] > 0 and made["seconds"] > 0 and board["after"] > 0
    if sandbox.sandbox_problem() is None:
        assert (made["iteration"], made["tests"], made["deployed"], made["version"]) == (
            2, "dev 3/3, held-out 3/3", True, 1
        )  # fmt: skip
    assert not refused["deployed"] and "too short" in refused["reason"] and refused["tests"] == "-"
    assert others["user"] == "ben" and others["tasks"] == []


async def add_factory_session(store: SqliteStore, user: str, turns: int) -> None:
    """A factory session of `turns` finished tasks, each with its events, two tester
    iterations (the second passing) and a deployment."""
    session = store.new_session(user, "factory")
    for n in range(turns):
        turn_id = (await store.start_turn(session, f"task {n}", new_session=n == 0)).id
        for iteration in (1, 2):
            store.record_event(Event("agent_started", turn_id, session.id, 1.0, "tester", {"iteration": iteration}))
            report = {"dev_passed": iteration, "dev_total": 2, "heldout_passed": iteration, "heldout_total": 2}
            await store.write_entry(
                turn_id=turn_id, user_id=user, agent="tester", status="ok", output=report, error=None,
                iteration=iteration,
            )  # fmt: skip
        store.record_event(Event("agent_finished", turn_id, session.id, 2.5, "deployer", {"completion_tokens": 7}))
        deployment = {"deployed": True, "name": f"agent-{n}", "version": 1, "reason": ""}
        await store.write_entry(
            turn_id=turn_id, user_id=user, agent="deployer", status="ok", output=deployment, error=None
        )
        await store.finish_turn(turn_id, "ok", [("documenter", "done")])


async def test_the_task_board_takes_as_many_statements_for_ten_factory_sessions_as_for_one(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cantata.db")
    try:
        chat = store.new_session("ann", "coaching")  # not a task
        await store.start_turn(chat, "hello", new_session=True)
        await add_factory_session(store, "ben", 2)  # not ann's
        await add_factory_session(store, "ann", 3)
        one = await statements_during(store, lambda: task_board(store, "ann"))
        for _ in range(9):
            await add_factory_session(store, "ann", 3)
        board = await task_board(store, "ann")
        ten = await statements_during(store, lambda: task_board(store, "ann"))
        last = (await store.events_after(0, user_id="ann", limit=10**6))[-1]
    finally:
        await store.close()
    assert len(one) == len(ten) == 3, ten  # the turns, their events, their entries
    assert len(board.tasks) == 30 and [t.turn_id for t in board.tasks] == sorted(
        (t.turn_id for t in board.tasks), reverse=True
    )
    newest = board.tasks[0]
    assert (newest.request, newest.role, newest.stage, newest.iteration) == ("task 2", "deployer", "finished", 2)
    assert (newest.tests, newest.tokens, newest.seconds) == ("dev 2/2, held-out 2/2", 7, 2.5)
    assert (newest.deployed, newest.agent, newest.version) == (True, "agent-2", 1)
    assert board.after == last.seq  # ann's coaching turn has no event: the tasks' last is hers


def test_the_analysts_meaningless_checks_are_dropped_and_halves_alternate() -> None:
    from cantata import CheckContext
    from cantata.pipelines.factory.roles import analyst_check

    junk = [
        {"kind": "equals", "field": "", "value": ""},
        {"kind": "count_at_least", "field": "items", "value": "a few"},
    ]
    good = [{"kind": "contains", "field": "items", "value": "ana"}]
    examples = [{"input": f"note {i}", "checks": junk if i % 3 == 0 else good} for i in range(6)]
    ctx = CheckContext(message=REQUEST, user="u", session="s", turn=1, inputs={}, missing=[], memory={},
                       output={"input": "notes", "output": "items", "examples": examples})  # fmt: skip
    checked = analyst_check(ctx)
    kept = [[(c.kind, c.field, c.value) for c in e.checks] for e in checked.examples]
    assert kept[0] == kept[3] == [("has_field", "", "")], "nothing meaningful left: a valid output is the test"
    assert all(k == [("contains", "items", "ana")] for i, k in enumerate(kept) if i % 3)
    assert [e.half for e in checked.examples] == ["dev", "heldout"] * 3


def test_the_builder_fills_the_artefact_from_the_design_and_adds_no_tool_it_did_not_ask_for() -> None:
    from cantata import CheckContext
    from cantata.pipelines.factory.roles import builder_check, fixer_check

    design = {"name": "word-count", "instructions": "Count the words.", "tool": False,
              "fields": [{"name": "words", "type": "integer"}]}  # fmt: skip
    code = "def run(value):\n    return 1\n"

    def ctx(inputs: dict[str, object], output: object) -> CheckContext:
        return CheckContext(message=REQUEST, user="u", session="s", turn=1, inputs=inputs, missing=[], memory={},
                            output=output)  # fmt: skip

    built = builder_check(ctx({"architect": design}, {"instructions": "You count words.", "tool_code": code}))
    assert (built.name, built.instructions, [f.name for f in built.fields], built.tool_code) == (
        "word-count", "You count words.", ["words"], ""
    )  # fmt: skip
    patch = {"instructions": "", "fields": [{"name": "count", "type": "integer"}], "tool_code": code, "changes": "x"}
    fixed = fixer_check(ctx({"builder": built.model_dump()}, patch))
    assert (fixed.name, fixed.instructions, [f.name for f in fixed.fields], fixed.tool_code) == (
        "word-count", "You count words.", ["count"], ""
    )  # fmt: skip
    with_tool = builder_check(ctx({"architect": {**design, "tool": True}}, {"instructions": "", "tool_code": code}))
    assert with_tool.tool_code == code and with_tool.instructions == "Count the words."


def untested_config(write: WriteFile) -> Path:
    """Canned replies whose tests all pass but check only that the output is valid."""
    canned = yaml.safe_load(CANNED.read_text())
    canned["architect"]["fields"][0]["name"] = "items"  # no planted failure: every test passes
    for example in canned["analyst"]["examples"]:
        example["checks"] = [{"kind": "equals", "field": "", "value": ""}]  # dropped: nothing left to test
    replies = write("canned.yaml", yaml.safe_dump(canned))
    return write("instances.yaml", f"instances:\n  - name: canned\n    backend: scripted\n    replies: {replies}\n")


@needs_bwrap
async def test_tests_that_check_only_a_valid_output_do_not_deploy_the_agent(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(untested_config(write)), home=home)
    try:
        result = await app.run_turn(pipelines.load("factory"), REQUEST)
        versions = await app.store.agent_versions()
    finally:
        await app.close()
    agents = {a.name: a.output for a in result.agents}
    assert agents["tester"]["dev_passed"] == 3 and agents["tester"]["heldout_passed"] == 3
    deployment = agents["deployer"]
    assert not deployment["deployed"] and "none a property" in deployment["reason"]
    # The deployer's own rule held it back, not a finding of the critic's.
    assert deployment["rules"] and not deployment["blocking"] and not agents["critic"]["blocking"]
    assert versions == []


@needs_bwrap
def test_the_plain_outcome_says_why_where_the_draft_is_and_what_next(write: WriteFile, home: Path) -> None:
    done = cantata("factory", REQUEST, "--config", str(untested_config(write)))
    assert done.returncode == 1, done.stderr
    outcome = done.stdout[done.stdout.index("Not deployed:") :].splitlines()
    draft = next(home.glob("factory/turn-*/draft"))
    assert outcome == [
        "Not deployed: action-items",
        "  rule: test quality: every example checks only that the output is valid, none a property of it",
        f'Draft: {draft}  (try it: cantata run {draft}/pipeline.yaml -m "...")',
        f"Next: cantata factory '{REQUEST}' --force deploys it anyway (its card says so); {BIGGER_MODEL}.",
    ]
    assert load_pipeline(draft / "pipeline.yaml").name == "action-items"  # the draft runs as it is


def test_a_blocking_finding_is_named_only_when_the_critic_said_blocking() -> None:
    task = {"deployed": False, "refused": False, "agent": "notes", "reason": "r", "failing_tests": [],
            "rules": [], "blocking": ["tool.py: imports socket"], "draft": "/h/draft", "turn": {}}  # fmt: skip
    lines = outcome_lines(task, "notes")
    assert lines[1] == "  blocking finding (critic): tool.py: imports socket" and "--force" in lines[-1]
    failing = {**task, "blocking": [], "failing_tests": [f"dev #{i}: wrong" for i in range(1, 8)]}
    text = "\n".join(outcome_lines(failing, "notes"))
    assert "blocking" not in text and "  failing test: dev #5: wrong" in text and "2 more failing tests" in text
    refused = {**task, "refused": True, "agent": None, "reason": "it needs internet access"}
    assert outcome_lines(refused, "x")[0] == "Not built: it needs internet access."
