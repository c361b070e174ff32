"""/api, /healthz, /metrics and auth, in process (httpx ASGITransport), on scripted instances."""

from __future__ import annotations

import asyncio
import json
import posixpath
import re
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from cantata.errors import UserError
from cantata.server.keys import CACHE_S
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.server_app import chat_body, client, make_app, new_key, running
from tests.helpers.sse import parse
from tests.test_cli import cantata


@pytest.fixture
def config(write: WriteFile) -> Path:
    return scripted_config(write, fast={"latency_s": 0.01})


async def test_open_mode_on_loopback_is_one_local_admin(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        who = (await c.get("/api/whoami")).json()
    assert who == {"user": "local", "admin": True, "auth": "open"}


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/sessions", "/mcp"])
async def test_an_open_server_answers_only_loopback_names_and_pages(config: Path, home: Path, path: str) -> None:
    """A web page that rebinds its own name to 127.0.0.1 (Host: evil.example), or any other
    site's page (Origin), gets nothing from an open server, on every route: 421 and 403 in the
    one error shape. Its own names and pages (the dashboard's Origin) are answered."""
    body = chat_body("hi") if path == "/v1/chat/completions" else {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    method = "GET" if path == "/api/sessions" else "POST"
    accept = {"Accept": "application/json, text/event-stream"}

    async def ask(c: httpx.AsyncClient, **headers: str) -> httpx.Response:
        return await c.request(method, path, json=body if method == "POST" else None, headers={**accept, **headers})

    async with running(make_app(config, home)) as app, client(app) as c:
        rebound = await ask(c, Host="evil.example:8000")
        foreign = await ask(c, Origin="http://evil.example")
        sandboxed = await ask(c, Origin="null")
        answered = [
            await ask(c, Host="localhost:8000", Origin="http://localhost:8000"),
            await ask(c, Host="[::1]:8000"),
            await ask(c, Host="127.0.0.1", Origin="https://127.0.0.1:8443"),
        ]
    assert rebound.status_code == 421 and rebound.json()["error"] == {
        "message": "the Host 'evil.example:8000' is not a loopback name: an open server answers only those",
        "type": "invalid_request_error",
        "code": "misdirected_request",
    }
    assert foreign.status_code == sandboxed.status_code == 403
    assert foreign.json()["error"]["code"] == sandboxed.json()["error"]["code"] == "foreign_origin"
    assert [r.status_code for r in answered] == [200] * 3, [r.text for r in answered]


async def test_with_keys_any_host_is_answered(config: Path, home: Path) -> None:
    """Keys in force: a rebinding page has no key, so the name asked for is not checked (a
    loopback server behind a reverse proxy keeps working)."""
    key = await new_key(home, "ann")
    async with running(make_app(config, home)) as app, client(app, key) as c:
        proxied = await c.get("/api/sessions", headers={"Host": "cantata.example.org", "Origin": "https://app.example"})
    assert proxied.status_code == 200


async def test_non_loopback_without_keys_is_refused_at_start(config: Path, home: Path) -> None:
    with pytest.raises(UserError, match="without API keys"):
        async with running(make_app(config, home, host="0.0.0.0")):
            pass


def test_serve_refuses_a_public_address_without_keys_in_one_line(config: Path) -> None:
    done = cantata("serve", "--host", "0.0.0.0", "--port", "1", "--config", str(config))
    assert done.returncode == 2
    assert done.stderr.startswith("error: refusing to serve on 0.0.0.0") and done.stderr.count("\n") == 1


async def test_keys_are_required_once_one_exists_and_revoked_keys_fail(config: Path, home: Path) -> None:
    created = cantata("keys", "create", "--user", "ann")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    listed = cantata("keys", "list").stdout
    assert "ann" in listed and token not in listed and "active" in listed
    assert token not in (home / "cantata.db").read_bytes().decode("latin-1")  # only its hash is stored
    async with running(make_app(config, home)) as app:
        async with client(app) as anonymous, client(app, "cnt_bad_key") as wrong, client(app, token) as ann:
            assert (await anonymous.get("/api/sessions")).status_code == 401
            assert (await wrong.get("/v1/models")).status_code == 401
            assert (await ann.get("/api/whoami")).json() == {"user": "ann", "admin": False, "auth": "keys"}
            key_id = token.split("_")[1]
            assert cantata("keys", "revoke", key_id).returncode == 0
            await asyncio.sleep(CACHE_S)  # revoked by another process: the server's copy of the key ages out
            r = await ann.get("/api/whoami")
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"


async def test_one_users_key_sees_nothing_of_another_users(config: Path, home: Path) -> None:
    ann_key, bob_key = await new_key(home, "ann"), await new_key(home, "bob")
    admin_key = await new_key(home, "root", admin=True)
    async with running(make_app(config, home)) as app:
        async with client(app, ann_key) as ann, client(app, bob_key) as bob, client(app, admin_key) as admin:
            bobs = (await bob.post("/v1/chat/completions", json=chat_body("bob's secret"))).json()["cantata"]
            anns = (await ann.post("/v1/chat/completions", json=chat_body("ann's own"))).json()["cantata"]
            session, turn = bobs["session"], bobs["turn_id"]
            for path in (
                f"/api/sessions/{session}",
                f"/api/turns/{turn}",
                f"/api/turns/{turn}/blackboard",
                f"/api/turns/{turn}/events",
                "/api/memory?user=bob",
                "/api/memory/export?user=bob",
                "/api/sessions?user=bob",
                "/api/events?user=bob",
                "/api/instances/history?user=bob",
            ):
                r = await ann.get(path)
                assert r.status_code == 404, (path, r.text)
                assert "bob's secret" not in r.text
            assert (await ann.delete("/api/memory?user=bob")).status_code == 404
            r = await ann.post("/v1/chat/completions", json=chat_body("hi"), headers={"X-Cantata-Session": session})
            assert r.status_code == 404
            # Ann's own views hold only her data; her event stream only her turns.
            assert [s["id"] for s in (await ann.get("/api/sessions")).json()] == [anns["session"]]
            assert "bob's secret" not in (await ann.get("/api/memory/export")).text
            seen = {
                e.json()["turn_id"] for e in parse((await ann.get(f"/api/turns/{anns['turn_id']}/events")).text) if e.id
            }
            assert seen == {anns["turn_id"]}
            everything = parse((await ann.get("/api/events?follow=false")).text)
            assert {e.json()["turn_id"] for e in everything if e.id} == {anns["turn_id"]}
            admins = parse((await admin.get("/api/events?follow=false")).text)
            assert {e.json()["turn_id"] for e in admins if e.id} == {anns["turn_id"], turn}
            # The admin sees both users.
            for name in ("ann", "bob"):
                assert {s["user"] for s in (await admin.get(f"/api/sessions?user={name}")).json()} == {name}
            assert (await admin.get(f"/api/turns/{turn}")).status_code == 200
            forbidden = await ann.get("/metrics")  # every user's figures: for operators
            assert forbidden.status_code == 403 and forbidden.json()["error"]["type"] == "permission_error"
            assert (await admin.get("/metrics")).status_code == 200


async def test_a_users_key_sees_only_its_own_figures_of_the_instances(config: Path, home: Path) -> None:
    ann_key, bob_key = await new_key(home, "ann"), await new_key(home, "bob")
    admin_key = await new_key(home, "root", admin=True)
    async with running(make_app(config, home)) as app:
        async with client(app, ann_key) as ann, client(app, bob_key) as bob, client(app, admin_key) as admin:
            await ann.post("/v1/chat/completions", json=chat_body("ann's one turn"))
            for _ in range(2):
                await bob.post("/v1/chat/completions", json=chat_body("bob again"))
            seen = {
                who: {i["name"]: i for i in (await c.get("/api/instances?check=true")).json()}
                for who, c in (("ann", ann), ("bob", bob), ("admin", admin))
            }
    per_turn = seen["ann"]["fast"]["live"]["finished"]
    assert per_turn > 0  # the example pipeline's model agents on `fast`, once per turn
    assert seen["bob"]["fast"]["live"]["finished"] == 2 * per_turn
    assert seen["admin"]["fast"]["live"]["finished"] == 3 * per_turn
    assert all(seen[who]["fast"]["queued_now"] == seen[who]["fast"]["running_now"] == 0 for who in seen)


async def test_turn_blackboard_session_and_memory(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        body = (await c.post("/v1/chat/completions", json=chat_body("I skip the gym", model="coaching"))).json()
        info = body["cantata"]
        turn = (await c.get(f"/api/turns/{info['turn_id']}")).json()
        board = (await c.get(f"/api/turns/{info['turn_id']}/blackboard")).json()
        session = (await c.get(f"/api/sessions/{info['session']}")).json()
        memory = (await c.get("/api/memory")).json()
        exported = (await c.get("/api/memory/export")).json()
        deleted = (await c.delete("/api/memory")).json()
        after = (await c.get("/api/sessions")).json()
        gone = await c.get(f"/api/turns/{info['turn_id']}")
    assert {"pipeline", "user", "session", "turn", "status", "early", "final", "agents", "conflicts"} <= set(turn)
    assert turn["status"] == info["status"] and turn["final"]["text"] == body["choices"][0]["message"]["content"]
    assert [a["name"] for a in turn["agents"]] == [a["name"] for a in info["agents"]]
    assert all(a["finished_s"] is not None for a in turn["agents"])
    assert {e["agent"] for e in board["entries"]} == {a["name"] for a in turn["agents"]}
    assert session["turn_list"][0]["message"] == "I skip the gym" and session["turns"] == 1
    # The chat shows a session again as it streamed: the early and the merged reply apart.
    assert session["turn_list"][0]["early"] == turn["early"]["text"] and turn["early"]["agent"] == "coach"
    assert session["turn_list"][0]["merged"] == turn["final"]["text"] == session["turn_list"][0]["reply"]
    assert board["pipeline"] == "coaching"
    assert "coaching" in memory["memory"] and memory["sessions"] == 1
    assert exported["sessions"][0]["session"] == info["session"]
    assert deleted == {"user": "local", "sessions_deleted": 1} and after == [] and gone.status_code == 404


async def test_pipelines_instances_plan_and_tasks(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        pipelines = {p["name"]: p for p in (await c.get("/api/pipelines")).json()}
        await c.post("/v1/chat/completions", json=chat_body("hi"))
        instances = (await c.get("/api/instances")).json()
        checked = (await c.get("/api/instances?check=true")).json()
        plan = await c.post("/api/plan", json={"pipeline": "coaching", "hardware": "1x4090"})
        bad_plan = await c.post("/api/plan", json={"pipeline": "coaching", "hardware": "toaster"})
        tasks = (await c.get("/api/tasks")).json()
        schema = (await c.get("/openapi.json")).json()
    coaching = pipelines["coaching"]
    assert ("guard", "coach") in [tuple(e) for e in coaching["edges"]]
    assert coaching["critical_path"][-1] == "synth" and coaching["critical_path"][0] == "guard"
    assert all(a["instance"] == "fast" for a in coaching["agents"] if a["kind"] == "model")
    # Scores come with their scale, read from each output's schema.
    persona = next(a for a in coaching["agents"] if a["name"] == "persona")
    assert persona["scales"]["openness"] == [1, 5] and persona["scales"]["follow_through_pct"] == [0, 100]
    assert next(a for a in coaching["agents"] if a["name"] == "coach")["scales"] == {}
    assert instances[0]["name"] == "fast" and instances[0]["live"]["finished"] == 3
    assert instances[0]["health"] is None and checked[0]["health"]["reachable"] is True
    assert plan.status_code == 200 and plan.json()["plan"] and "vllm serve" in plan.json()["launch"]
    assert bad_plan.status_code == 400 and "toaster" in bad_plan.json()["error"]["message"]
    assert tasks["tasks"] == [] and tasks["note"]
    assert "/v1/chat/completions" in schema["paths"] and "/api/turns/{turn_id}" in schema["paths"]


async def test_the_instances_recent_load_is_read_back_bounded_and_per_user(write: WriteFile, home: Path) -> None:
    config = scripted_config(write, slow={"latency_s": 0.4})
    ann_key, bob_key = await new_key(home, "ann"), await new_key(home, "bob")
    async with running(make_app(config, home)) as app, client(app, ann_key) as ann, client(app, bob_key) as bob:
        assert (await ann.post("/v1/chat/completions", json=chat_body("hello"))).status_code == 200
        await asyncio.sleep(0.1)  # so the last step (each is a peak) begins after the last call ended
        fine = "/api/instances/history?seconds=10&points=500"  # a step every 20 ms: each call is seen
        anns, bobs = (await ann.get(fine)).json(), (await bob.get(fine)).json()
        too_long = await ann.get("/api/instances/history?seconds=86400")
        too_many = await ann.get("/api/instances/history?points=100000")
    [history] = anns
    assert history["name"] == "slow" and history["step_s"] == 0.02 and len(history["points"]) == 500
    assert max(p["running"] for p in history["points"]) >= 1  # the example's model agents ran on it
    assert history["points"][-1]["queued"] == history["points"][-1]["running"] == 0  # the turn is over
    ats = [p["at"] for p in history["points"]]
    assert ats == sorted(ats) and ats[-1] - ats[0] == pytest.approx(10 - 0.02)
    assert all(p["queued"] == p["running"] == 0 for p in bobs[0]["points"])  # ann's calls are hers
    for refused in (too_long, too_many):
        assert refused.status_code == 422 and "error" in refused.json()


async def test_metrics_parse_and_count_the_turns(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        for text in ("one", "two", "three"):
            await c.post("/v1/chat/completions", json=chat_body(text))
        text = (await c.get("/metrics")).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    turns = [s for s in families["cantata_turns"].samples if s.name == "cantata_turns_total"]
    assert sum(s.value for s in turns) == 3 and turns[0].labels == {"pipeline": "example", "status": "ok"}
    early = [s for s in families["cantata_early_reply_seconds"].samples if s.name.endswith("_count")]
    assert early[0].value == 3
    assert "cantata_instance_queued" in families and "cantata_tokens" in families


async def test_the_dashboard_is_served_as_static_files(config: Path, home: Path) -> None:
    scripts: dict[str, str] = {}
    async with running(make_app(config, home)) as app, client(app) as c:
        page = await c.get("/")
        missing = await c.get("/nope.js")
        wanted = ["app.js"]
        while wanted:  # every module app.js imports, and theirs: a browser fetches each one
            path = wanted.pop()
            script = await c.get(f"/{path}")
            assert script.status_code == 200, path
            assert script.headers["content-type"].startswith("text/javascript"), path  # modules need a JS type
            scripts[path] = script.text
            folder = posixpath.dirname(path)
            for imported in re.findall(r'^import .* from "(.+)";$', script.text, re.MULTILINE):
                resolved = posixpath.normpath(posixpath.join(folder, imported))
                if resolved not in scripts:
                    wanted.append(resolved)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="app.js">' in page.text
    assert "/v1/chat/completions" in scripts["views/chat.js"] and "sse.js" in scripts
    assert missing.status_code == 404


def test_keys_list_as_json_and_revoking_an_unknown_key_is_one_line() -> None:
    created = cantata("keys", "create", "--user", "ann", "--admin")
    assert created.returncode == 0 and created.stdout.startswith("cnt_")
    rows = json.loads(cantata("keys", "list", "--json").stdout)
    assert [(r["user"], r["admin"], r["revoked"]) for r in rows] == [("ann", True, False)]
    assert created.stdout.strip() not in json.dumps(rows)
    unknown = cantata("keys", "revoke", "nope")
    assert (
        unknown.returncode == 2
        and unknown.stderr.startswith("error: no active key")
        and unknown.stderr.count("\n") == 1
    )
    empty = cantata("keys", "create", "--user", " ")
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1


BEYOND_INT64 = "99999999999999999999999"


async def test_ids_out_of_range_are_404_and_event_positions_beyond_int64_are_422(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        turn = (await c.post("/v1/chat/completions", json=chat_body("hi"))).json()["cantata"]["turn_id"]
        missing = {
            path: await c.get(path)
            for turn_id in (BEYOND_INT64, "-1", "0", f"-{BEYOND_INT64}")
            for path in (f"/api/turns/{turn_id}", f"/api/turns/{turn_id}/blackboard", f"/api/turns/{turn_id}/events")
        }
        missing["/api/sessions/x"] = await c.get(f"/api/sessions/{BEYOND_INT64 * 40}")
        malformed = await c.get("/api/turns/1e400")
        bad_positions = [
            await c.get(f"/api/events?follow=false&after={BEYOND_INT64}"),
            await c.get("/api/events?follow=false&after=-1"),
            await c.get("/api/events?follow=false", headers={"Last-Event-ID": BEYOND_INT64}),
            await c.get(f"/api/turns/{turn}/events", headers={"Last-Event-ID": BEYOND_INT64}),
            await c.get(f"/api/turns/{turn}/events?after={BEYOND_INT64}"),
        ]
        highest = await c.get("/api/events?follow=false", headers={"Last-Event-ID": str(2**63 - 1)})
    for path, r in missing.items():
        assert r.status_code == 404, (path, r.text)
        assert set(r.json()["error"]) == {"message", "type", "code"}
    assert malformed.status_code == 422 and set(malformed.json()["error"]) == {"message", "type", "code"}
    for r in bad_positions:  # bounded in the schema (an int64 from 0): FastAPI refuses them, in the one shape
        assert r.status_code == 422, r.text
        message = r.json()["error"]["message"]
        assert ("last-event-id" in message or "after" in message) and "\n" not in message
    assert highest.status_code == 200 and "data:" not in highest.text  # nothing after the last possible id


async def test_healthz_says_only_that_the_server_is_up(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        health = await c.get("/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok"}


async def test_a_method_a_path_lacks_is_405_with_allow(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        on_api = await c.put("/api/memory")
        post_only = await c.get("/api/plan")
        static = await c.post("/index.html")
    assert on_api.status_code == 405 and on_api.headers["allow"] == "DELETE, GET"
    assert post_only.status_code == 405 and post_only.headers["allow"] == "POST"
    assert "GET is not allowed on /api/plan" in post_only.json()["error"]["message"]
    assert static.status_code == 405 and static.headers["allow"] == "GET, HEAD"


async def test_the_document_declares_the_real_error_body_and_the_bearer_scheme(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        schema = (await c.get("/openapi.json")).json()
    error = {"$ref": "#/components/schemas/ErrorResponse"}
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    turn = schema["paths"]["/api/turns/{turn_id}"]["get"]
    assert turn["security"] == [{"bearer": []}]
    for status in ("401", "404", "422"):
        assert turn["responses"][status]["content"]["application/json"]["schema"] == error, status
    chat = schema["paths"]["/v1/chat/completions"]["post"]["responses"]
    assert {"400", "401", "403", "404", "409", "413", "421", "422", "503"} <= set(chat)
    assert {"403", "421"} <= set(schema["paths"]["/healthz"]["get"]["responses"])  # an open server's refusals
    assert "security" not in schema["paths"]["/healthz"]["get"]


async def test_a_following_event_stream_ends_when_the_server_stops(config: Path, home: Path) -> None:
    """An open /api/events stream must not hold a shutdown for its whole grace: it ends, and
    its client reconnects to the successor with Last-Event-ID."""
    async with running(make_app(config, home)) as app, client(app) as c:
        await c.post("/v1/chat/completions", json=chat_body("hello", model="example"))
        following = asyncio.create_task(c.get("/api/events"))  # follows: ends only when the server stops
        await asyncio.sleep(0.2)
        assert not following.done()
        app.state.service.stop_accepting()
        events = parse((await asyncio.wait_for(following, timeout=60)).text)  # a hang fails, not a slow end
    assert events[-1].event == "turn_delivered"
