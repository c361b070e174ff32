"""The store's conformance tests, through its protocols only (one section per concern:
`SessionStore`, `BlackboardStore`, `ToolCallLog`, `EventLog`, `AgentRegistry`, `ApiKeys`, `UserData`): every test
runs once per implementation (`STORE_IMPLEMENTATIONS` in conftest.py), so a new store
joins by adding itself there."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import math
from collections.abc import AsyncIterator

import pytest

from cantata.errors import StoreError
from cantata.events import Event
from cantata.store import ApiKeyRow, Forgotten, InstanceEvent, SessionRow, Store, ToolCallRow, TurnContext, TurnRef
from tests.helpers.stores import StoreFactory


@pytest.fixture
async def store(open_test_store: StoreFactory) -> AsyncIterator[Store]:
    opened = open_test_store()
    yield opened
    await opened.close()


async def new_turn(store: Store, user: str, message: str = "hi") -> tuple[str, int]:
    session = store.new_session(user, "p")
    turn_id = (await store.start_turn(session, message, new_session=True)).id
    return session.id, turn_id


# -- Writes: one order, shared commits, reads after the writes before them -----------------


async def test_writes_are_visible_to_another_store_on_the_same_database(open_shared_store: StoreFactory) -> None:
    first, second = open_shared_store(), open_shared_store()
    try:
        session_id, turn_id = await new_turn(first, "ana", "hello")
        first.record_event(Event("agent_started", turn_id, session_id, 0.1, "a"))
        first.record_event(Event("agent_token", turn_id, session_id, 0.2, "a", {"text": "x"}))  # live only
        await first.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=[1], error=None)
        # Committed, not just buffered: the event went with the entry's commit.
        assert [e.type for e in await second.events_after(0)] == ["agent_started"]
        assert (await second.entries(turn_id))["a"].output == [1]
        turn = await second.get_turn(turn_id)
        assert turn is not None and turn.message == "hello" and turn.status == "running"
    finally:
        await first.close()
        await second.close()


async def test_writes_in_one_tick_share_a_commit_but_fail_alone(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    await store.write_entry(turn_id=turn_id, user_id="ana", agent="dup", status="ok", output=1, error=None)
    results = await asyncio.gather(
        *(
            store.write_entry(turn_id=turn_id, user_id="ana", agent=name, status="ok", output=name, error=None)
            for name in ("x", "dup", "y")
        ),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], StoreError)
    assert set(await store.entries(turn_id)) == {"dup", "x", "y"}


async def test_a_read_sees_the_writes_queued_before_it(store: Store) -> None:
    # The scheduler does not wait for an entry's commit before its readers start: a read
    # (a reader's function looking at the blackboard, the server's API) must still see it.
    _, turn_id = await new_turn(store, "ana")
    queued = store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=1, error=None)
    entries = await store.entries(turn_id)
    assert entries["a"].output == 1
    await queued


async def test_a_cancelled_writer_does_not_hang_the_others(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    first = asyncio.ensure_future(
        store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=1, error=None)
    )
    second = asyncio.ensure_future(
        store.write_entry(turn_id=turn_id, user_id="ana", agent="b", status="ok", output=2, error=None)
    )
    await asyncio.sleep(0)  # both queued for the same commit
    first.cancel()
    await asyncio.wait_for(second, timeout=5)
    assert "b" in await store.entries(turn_id)


# -- SessionStore --------------------------------------------------------------------------


async def test_turn_numbers_stay_unique_with_two_writers_at_once(open_shared_store: StoreFactory) -> None:
    first, second = open_shared_store(), open_shared_store()
    try:
        session = first.new_session("ana", "p")
        await first.start_turn(session, "turn 1", new_session=True)
        started = await asyncio.gather(
            *(store.start_turn(session, f"from {i}") for i in range(20) for store in (first, second))
        )
        numbers = sorted(turn.number for turn in started)
        assert numbers == list(range(2, 42))
        turns = await second.turns(session.id)
        assert [t.number for t in turns] == list(range(1, 42))
        assert (await second.sessions("ana"))[0].turns == 41
    finally:
        await first.close()
        await second.close()


async def test_turns_and_sessions_read_back_as_delivered(store: Store) -> None:
    session = store.new_session("ana", "coaching")
    first = (await store.start_turn(session, "hello", new_session=True)).id
    await store.finish_turn(first, "ok", [("coach", "hi!"), ("synth", "hello, Ana")])
    started = await store.start_turn(session, "and now?")
    second = started.id
    assert started.number == 2
    turn = await store.get_turn(first)
    assert turn is not None
    assert (turn.session_id, turn.user_id, turn.pipeline, turn.number, turn.status) == (
        session.id,
        "ana",
        "coaching",
        1,
        "ok",
    )
    assert turn.replies == [("coach", "hi!"), ("synth", "hello, Ana")] and turn.finished_at is not None
    assert [t.id for t in await store.turns(session.id)] == [first, second]
    assert await store.get_turn(10**9) is None
    assert await store.unfinished_turn(first) is None
    unfinished = await store.unfinished_turn(second)
    assert unfinished is not None and unfinished[1:] == (2, "and now?")
    recent = await store.recent_turns(session.id, before_turn=second)
    assert [(t.number, t.user_message, t.reply) for t in recent] == [(1, "hello", "hello, Ana")]
    other = store.new_session("ana", "coaching")
    await store.start_turn(other, "later", new_session=True)
    assert [s.id for s in await store.sessions("ana")] == [other.id, session.id]
    assert await store.sessions("nobody") == []


async def test_a_turn_starts_with_what_it_reads_of_earlier_turns(store: Store) -> None:
    session = store.new_session("ana", "coaching")
    first = await store.start_turn(session, "hello", new_session=True, memory=["persona"])
    assert first.context == TurnContext(memory={}, summary="", summary_upto=0, recent=[])
    await store.write_entry(
        turn_id=first.id, user_id="ana", agent="persona", status="ok", output={"tone": "warm"}, error=None
    )
    await store.finish_turn(first.id, "ok", [("synth", "hello, Ana")])
    await store.set_summary(session.id, "Ana says hello.", 1)
    _, ben_turn = await new_turn(store, "ben")
    await store.write_entry(
        turn_id=ben_turn, user_id="ben", agent="shadow", status="ok", output={"of": "ben"}, error=None
    )

    second = await store.start_turn(session, "and now?", memory=["persona", "shadow"])
    context = second.context
    assert context.memory["persona"].output == {"tone": "warm"}
    assert "shadow" not in context.memory  # Ben's entry is not Ana's memory
    assert (context.summary, context.summary_upto) == ("Ana says hello.", 1)
    assert [(t.number, t.user_message, t.reply) for t in context.recent] == [(1, "hello", "hello, Ana")]
    # A resumed turn reads the same context back.
    assert await store.turn_context(session, second.id, ["persona", "shadow"]) == context
    # A new session of the same user starts with the user's memory, and nothing of the other session.
    elsewhere = await store.start_turn(
        store.new_session("ana", "coaching"), "hi again", new_session=True, memory=["persona"]
    )
    assert elsewhere.number == 1
    assert elsewhere.context == TurnContext(memory={"persona": context.memory["persona"]})


async def test_a_users_turns_are_read_across_sessions_newest_first_of_one_pipeline_if_asked(
    store: Store,
) -> None:
    built = store.new_session("ana", "factory")
    one = (await store.start_turn(built, "build it", new_session=True)).id
    await store.finish_turn(one, "ok", [("builder", "early"), ("documenter", "done")])
    chat = store.new_session("ana", "coaching")
    two = (await store.start_turn(chat, "hello", new_session=True)).id
    three = (await store.start_turn(built, "build another")).id
    await new_turn(store, "ben")  # another user's: never listed
    turns = await store.user_turns("ana")
    assert [(t.id, t.session_id, t.number, t.message) for t in turns] == [
        (three, built.id, 2, "build another"),
        (two, chat.id, 1, "hello"),
        (one, built.id, 1, "build it"),
    ]
    assert turns[-1] == await store.get_turn(one)  # the same row, replies in order
    assert turns[-1].replies == [("builder", "early"), ("documenter", "done")]
    assert [t.id for t in await store.user_turns("ana", pipeline="factory")] == [three, one]
    assert await store.user_turns("ana", pipeline="nothing") == []
    assert await store.user_turns("nobody") == []


async def test_cited_turns_messages_are_read_across_the_users_sessions_and_only_theirs(store: Store) -> None:
    first = store.new_session("ana", "coaching")
    one = (await store.start_turn(first, "I ran twice", new_session=True)).id
    await store.finish_turn(one, "ok", [("synth", "You ran twice.")])  # a reply is not the person's message
    await store.start_turn(first, "then it rained")
    second = store.new_session("ana", "coaching")
    await store.start_turn(second, "a new week", new_session=True)
    bens, _ = await new_turn(store, "ben", "Ben's words")
    asked = [TurnRef(second.id, 1), TurnRef(first.id, 1), TurnRef(first.id, 2), TurnRef(first.id, 9), TurnRef(bens, 1)]
    assert await store.turn_messages("ana", asked) == {
        TurnRef(second.id, 1): "a new week",
        TurnRef(first.id, 1): "I ran twice",
        TurnRef(first.id, 2): "then it rained",  # still running: its message is stored before any agent runs
    }
    assert await store.turn_messages("ben", asked) == {TurnRef(bens, 1): "Ben's words"}
    assert await store.turn_messages("ana", []) == {}


async def test_summary_is_kept_per_session(store: Store) -> None:
    session_id, _ = await new_turn(store, "ana")
    assert await store.session_summary(session_id) == ("", 0)
    await store.set_summary(session_id, "Ana walks to work.", 3)
    assert await store.session_summary(session_id) == ("Ana walks to work.", 3)


async def test_an_early_reply_is_history_before_its_turn_finishes(store: Store) -> None:
    session = store.new_session("ana", "coaching")
    first = (await store.start_turn(session, "hello", new_session=True)).id
    await store.add_reply(first, "coach", "hi!")
    # The turn never finished (a crash): the next turn's context still holds what was said.
    second = await store.start_turn(session, "are you there?")
    assert [(t.number, t.user_message, t.reply) for t in second.context.recent] == [(1, "hello", "hi!")]
    await store.finish_turn(first, "ok", [("synth", "hello, Ana")])
    turn = await store.get_turn(first)
    assert turn is not None and turn.replies == [("coach", "hi!"), ("synth", "hello, Ana")]
    recent = await store.recent_turns(session.id, before_turn=second.id)
    assert [(t.number, t.reply) for t in recent] == [(1, "hello, Ana")]  # the latest reply


async def test_running_turns_are_listed_oldest_first_of_one_session_if_asked(store: Store) -> None:
    one, first = await new_turn(store, "ana")
    _, other = await new_turn(store, "ben")
    done = (await store.start_turn(SessionRow(one, "ana", "p"), "again")).id
    await store.finish_turn(done, "ok", [])
    assert await store.running_turns() == [first, other]
    assert await store.running_turns(one) == [first]
    assert await store.running_turns("nothing") == []


# -- SessionLeases -------------------------------------------------------------------------


async def test_a_session_lease_has_one_holder_until_released_or_expired(open_shared_store: StoreFactory) -> None:
    first, second = open_shared_store(), open_shared_store()
    try:
        assert await first.lease_session("s1", "host/1/a", ttl_s=60) is None
        assert await first.lease_session("s1", "host/1/a", ttl_s=60) is None  # renewed
        assert await second.lease_session("s1", "host/2/b", ttl_s=60) == "host/1/a"
        assert await second.lease_session("s2", "host/2/b", ttl_s=60) is None  # another session is free
        await second.release_session("s1", "host/2/b")  # not its lease: nothing happens
        assert await second.lease_session("s1", "host/2/b", ttl_s=60) == "host/1/a"
        # A holder known to be gone (its process died) is taken over; only that one.
        assert await second.lease_session("s1", "host/2/b", ttl_s=60, take_from="host/9/z") == "host/1/a"
        assert await second.lease_session("s1", "host/2/b", ttl_s=60, take_from="host/1/a") is None
        assert await first.lease_session("s1", "host/1/a", ttl_s=60) == "host/2/b"
        await second.release_session("s1", "host/2/b")
        assert await first.lease_session("s1", "host/1/a", ttl_s=-1) is None  # already expired
        assert await second.lease_session("s1", "host/2/b", ttl_s=60) is None
    finally:
        await first.close()
        await second.close()


async def test_forgetting_a_user_drops_their_sessions_leases(store: Store) -> None:
    session_id, _ = await new_turn(store, "ana")
    assert await store.lease_session(session_id, "host/1/a", ttl_s=60) is None
    await store.forget_user("ana")
    assert await store.lease_session(session_id, "host/2/b", ttl_s=60) is None


# -- BlackboardStore -----------------------------------------------------------------------


async def test_blackboard_is_write_once(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 1}, error=None)
    with pytest.raises(StoreError, match="already has an entry"):
        await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 2}, error=None)
    assert (await store.entries(turn_id))["a"].output == {"x": 1}


async def test_memory_is_the_latest_ok_entry_of_this_user_only(store: Store) -> None:
    for user in ("ana", "ben"):
        session = store.new_session(user, "p")
        for n in range(2):
            turn_id = (await store.start_turn(session, f"{user} {n}", new_session=n == 0)).id
            await store.write_entry(
                turn_id=turn_id, user_id=user, agent="shadow", status="ok", output={"who": user, "n": n}, error=None
            )
            await store.finish_turn(turn_id, "ok", [])
    _, failed_turn = await new_turn(store, "ana", "x")
    await store.write_entry(turn_id=failed_turn, user_id="ana", agent="shadow", status="failed", output=None, error="e")
    memory = await store.latest_outputs("ana", ["shadow"], before_turn=10_000)
    assert memory["shadow"].output == {"who": "ana", "n": 1}


async def test_memory_of_several_agents_is_read_at_once_in_the_order_asked(store: Store) -> None:
    session = store.new_session("ana", "p")
    first = (await store.start_turn(session, "one", new_session=True)).id
    for agent in ("persona", "shadow"):
        await store.write_entry(turn_id=first, user_id="ana", agent=agent, status="ok", output=[agent, 1], error=None)
    second = (await store.start_turn(session, "two")).id
    for iteration in (1, 2):  # a looped agent: its latest iteration is its latest output
        await store.write_entry(
            turn_id=second,
            user_id="ana",
            agent="persona",
            status="ok",
            output=["persona", 2, iteration],
            error=None,
            iteration=iteration,
        )
    memory = await store.latest_outputs("ana", ["shadow", "nobody", "persona"], before_turn=10**9)
    assert list(memory) == ["shadow", "persona"]
    assert memory["shadow"].output == ["shadow", 1]
    assert (memory["persona"].output, memory["persona"].iteration) == (["persona", 2, 2], 2)
    assert (await store.latest_outputs("ana", ["persona"], before_turn=second))["persona"].output == ["persona", 1]
    assert await store.latest_outputs("ana", [], before_turn=10**9) == {}


async def test_entry_histories_are_each_turns_entries_in_write_order_of_the_agents_asked(store: Store) -> None:
    _, looped = await new_turn(store, "ana")
    _, plain = await new_turn(store, "ana")
    _, empty = await new_turn(store, "ana")
    writes = [(looped, "critic", 1), (looped, "tester", 1), (plain, "tester", 0), (looped, "critic", 2)]
    writes += [(looped, "tester", 2), (plain, "deployer", 0)]
    for turn_id, agent, iteration in writes:
        await store.write_entry(
            turn_id=turn_id, user_id="ana", agent=agent, status="ok", output=[agent, iteration], error=None,
            iteration=iteration,
        )  # fmt: skip
    histories = await store.entry_histories([looped, plain, empty, 10**9])
    assert histories == {
        looped: await store.entry_history(looped),
        plain: await store.entry_history(plain),
        empty: [],
        10**9: [],  # no such turn: nothing, as for a turn without entries
    }
    assert [(e.agent, e.iteration) for e in histories[looped]] == [
        ("critic", 1),
        ("tester", 1),
        ("critic", 2),
        ("tester", 2),
    ]
    tested = await store.entry_histories([plain, looped], agents=["tester"])
    assert {turn_id: [e.output for e in found] for turn_id, found in tested.items()} == {
        plain: [["tester", 0]],
        looped: [["tester", 1], ["tester", 2]],
    }
    assert await store.entry_histories([looped], agents=[]) == {looped: []}
    assert await store.entry_histories([]) == {}


async def test_an_output_reads_back_as_written_non_finite_numbers_included(store: Store) -> None:
    # A function's statistics over no data: NaN and infinities must not come back as null.
    _, turn_id = await new_turn(store, "ana")
    output = {"mean": float("nan"), "max": float("inf"), "min": float("-inf"), "n": 0, "note": None}
    await store.write_entry(turn_id=turn_id, user_id="ana", agent="stats", status="ok", output=output, error=None)
    stored = (await store.entries(turn_id))["stats"].output
    assert math.isnan(stored["mean"])
    assert {k: v for k, v in stored.items() if k != "mean"} == {k: v for k, v in output.items() if k != "mean"}


async def test_an_output_that_is_not_json_data_fails_with_a_store_error_and_writes_nothing(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    for output in ({"tags": {"a", "b"}}, {"when": datetime.datetime(2026, 1, 1)}):
        with pytest.raises(StoreError, match="agent 'tags'"):
            await store.write_entry(
                turn_id=turn_id, user_id="ana", agent="tags", status="ok", output=output, error=None
            )
    assert await store.entries(turn_id) == {}


# -- ToolCallLog ---------------------------------------------------------------------------


async def test_a_tool_call_is_recorded_started_then_replaced_by_its_outcome(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    _, other = await new_turn(store, "bo")
    started = ToolCallRow(turn_id, "a", 0, 1, 0, "c1", "add", {"a": 1, "b": [2, "é"]}, "started", side_effects=True)
    second = ToolCallRow(turn_id, "a", 0, 1, 1, "c2", "add", {}, "started")
    looped = ToolCallRow(turn_id, "a", 2, 1, 0, "c3", "add", {}, "error", error="bad", duration_s=0.5, bytes=3)
    await store.record_tool_calls([started, second, looped])
    done = dataclasses.replace(started, status="ok", result="3", duration_s=0.25, bytes=1)
    await store.record_tool_calls([done])
    calls = await store.tool_calls([turn_id, other])
    assert calls == {turn_id: [done, second, looped], other: []}
    assert calls[turn_id][0].arguments == {"a": 1, "b": [2, "é"]} and calls[turn_id][0].side_effects


async def test_a_users_tool_calls_are_exported_and_forgotten_with_their_turns(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    await store.record_tool_calls([ToolCallRow(turn_id, "a", 0, 1, 0, "c", "t", {}, "ok", result="secret")])
    (exported,) = (await store.export_user("ana"))["sessions"][0]["turns"]
    assert [(c["agent"], c["tool"], c["result"]) for c in exported["tool_calls"]] == [("a", "t", "secret")]
    await store.forget_user("ana")
    assert await store.tool_calls([turn_id]) == {turn_id: []}


# -- ApprovalLog ---------------------------------------------------------------------------


async def test_an_approval_is_asked_once_decided_once_and_makes_its_waiting_turn_running(store: Store) -> None:
    session, turn_id = await new_turn(store, "ana")
    _, other = await new_turn(store, "bo")
    waiting = [
        ToolCallRow(turn_id, "a", 0, 1, 0, "c1", "send", {"to": "é"}, "waiting"),
        ToolCallRow(turn_id, "a", 0, 1, 1, "c2", "pay", {}, "waiting"),
    ]
    first, second = await store.request_approvals(waiting)
    assert await store.request_approvals(waiting[:1]) == [first]  # asked again on resume: the same one
    await store.finish_turn(turn_id, "waiting", [])
    turn = await store.get_turn(turn_id)
    assert turn is not None and turn.status == "waiting"
    pending = await store.approvals(user_id="ana", pending=True)
    assert [(a.id, a.tool, a.arguments, a.status, a.session_id) for a in pending] == [
        (first, "send", {"to": "é"}, "pending", session),
        (second, "pay", {}, "pending", session),
    ]
    assert await store.approvals(user_id="bo") == [] and await store.approvals(turn_id=other) == []
    decided = await store.decide_approval(first, approved=True, reason=None, by="ana")
    assert decided is not None and not decided.resumable and decided.approval.status == "approved"
    assert await store.decide_approval(first, approved=False, reason="late", by="bo") is None  # once
    decided = await store.decide_approval(second, approved=False, reason="too much", by="ana")
    assert decided is not None and decided.resumable  # the last one: the turn is running again
    assert (decided.approval.reason, decided.approval.decided_by) == ("too much", "ana")
    assert await store.running_turns(session) == [turn_id]
    assert await store.approvals(session_id=session, pending=True) == []


async def test_a_turn_whose_approvals_were_decided_while_it_paused_stays_running(store: Store) -> None:
    _, turn_id = await new_turn(store, "ana")
    (approval,) = await store.request_approvals([ToolCallRow(turn_id, "a", 0, 1, 0, "c", "send", {}, "waiting")])
    decided = await store.decide_approval(approval, approved=True, reason=None, by="ana")
    assert decided is not None and not decided.resumable  # its turn was not waiting yet
    await store.finish_turn(turn_id, "waiting", [])
    turn = await store.get_turn(turn_id)
    assert turn is not None and turn.status == "running"  # so its runner goes on (runtime.py)


# -- EventLog ------------------------------------------------------------------------------


async def test_events_get_increasing_sequence_numbers_and_replay_after_one(store: Store) -> None:
    committed: list[Event] = []
    store.on_commit(committed.extend)
    ana_session, ana_turn = await new_turn(store, "ana")
    ben_session, ben_turn = await new_turn(store, "ben")
    recorded = [
        Event("turn_started", ana_turn, ana_session, 0.0, user_id="ana"),
        Event("agent_started", ben_turn, ben_session, 0.0, "a", user_id="ben"),
        Event("agent_token", ana_turn, ana_session, 0.1, "a", {"text": "x"}, user_id="ana"),
        Event("agent_finished", ana_turn, ana_session, 0.2, "a", {"tokens": 3}, user_id="ana"),
    ]
    for event in recorded:
        store.record_event(event)
    await store.finish_turn(ana_turn, "ok", [])
    seqs = [e.seq for e in committed]
    assert len(seqs) == 3 and all(s is not None for s in seqs) and seqs == sorted(set(seqs))  # type: ignore[type-var]
    assert recorded[2].seq is None  # tokens are never stored
    first = committed[0].seq
    assert first is not None
    after_first = await store.events_after(first)
    assert [(e.type, e.user_id) for e in after_first] == [("agent_started", "ben"), ("agent_finished", "ana")]
    assert [e.seq for e in after_first] == seqs[1:]
    assert [e.type for e in await store.events_after(0, user_id="ana")] == ["turn_started", "agent_finished"]
    assert [e.type for e in await store.events_after(0, turn_id=ben_turn)] == ["agent_started"]
    assert (await store.events(ana_turn))[1].data == {"tokens": 3}
    assert len(await store.events_after(0, limit=1)) == 1


async def test_events_without_a_write_are_committed_soon(store: Store) -> None:
    session_id, turn_id = await new_turn(store, "ana")
    committed: list[Event] = []
    store.on_commit(committed.extend)
    event = Event("agent_queued", turn_id, session_id, 0.0, "a")
    store.record_event(event)
    for _ in range(200):  # no write follows: a timer commits it
        if committed:
            break
        await asyncio.sleep(0.01)
    assert committed == [event] and event.seq is not None


async def test_events_of_two_writers_at_once_get_unique_numbers_in_the_order_committed(
    open_shared_store: StoreFactory,
) -> None:
    first, second = open_shared_store(), open_shared_store()
    try:
        turns = [(store, await new_turn(store, "ana")) for store in (first, second)]

        async def write(store: Store, session_id: str, turn_id: int) -> None:
            for n in range(20):
                store.record_event(Event("agent_started", turn_id, session_id, 0.1, f"a{n}"))
                await store.write_entry(
                    turn_id=turn_id, user_id="ana", agent=f"a{n}", status="ok", output=n, error=None
                )

        await asyncio.gather(*(write(store, *turn) for store, turn in turns))
        stored = await first.events_after(0, limit=1000)
        assert len(stored) == 40 and [e.seq for e in stored] == sorted({e.seq for e in stored})  # type: ignore[type-var]
        for _, (_, turn_id) in turns:  # each writer's in its own order
            assert [e.agent for e in stored if e.turn_id == turn_id] == [f"a{n}" for n in range(20)]
    finally:
        await first.close()
        await second.close()


async def test_a_reader_following_after_the_last_number_it_saw_misses_nothing_of_two_writers(
    open_shared_store: StoreFactory,
) -> None:
    """What a follower after seq N needs (SSE `Last-Event-ID`, event_feed's tail): numbers
    in the order committed, so nothing committed later has a number it has already passed."""
    first, second, reader = open_shared_store(), open_shared_store(), open_shared_store()
    try:
        turns = [(store, await new_turn(store, "ana")) for store in (first, second)]
        assert await reader.last_event_seq() == 0

        async def write(store: Store, session_id: str, turn_id: int) -> None:
            for n in range(30):
                store.record_event(Event("agent_started", turn_id, session_id, 0.1, f"a{n}"))
                await store.write_entry(
                    turn_id=turn_id, user_id="ana", agent=f"a{n}", status="ok", output=n, error=None
                )

        followed: list[int] = []

        async def follow(writing: asyncio.Future[object]) -> None:
            while True:
                done = writing.done()  # known before the read: a read after it sees every event
                followed.extend(e.stored_seq for e in await reader.events_after(followed[-1] if followed else 0))
                if done:
                    return
                await asyncio.sleep(0)

        writing = asyncio.gather(*(write(store, *turn) for store, turn in turns))
        await asyncio.gather(writing, follow(writing))
        stored = [e.stored_seq for e in await reader.events_after(0)]
        assert len(stored) == 60 and followed == stored
        assert await reader.last_event_seq() == stored[-1]
    finally:
        for store in (first, second, reader):
            await store.close()


async def test_numbers_of_a_forgotten_users_last_events_are_never_given_again(store: Store) -> None:
    """A follower that saw the forgotten events' numbers must see the next ones, which are higher."""
    ana_session, ana_turn = await new_turn(store, "ana")
    ben_session, ben_turn = await new_turn(store, "ben")
    store.record_event(Event("turn_started", ana_turn, ana_session, 0.0, user_id="ana"))
    store.record_event(Event("turn_started", ben_turn, ben_session, 0.0, user_id="ben"))
    await store.finish_turn(ben_turn, "ok", [])
    highest = await store.last_event_seq()
    await store.forget_user("ben")
    later = Event("turn_delivered", ana_turn, ana_session, 1.0, user_id="ana")
    store.record_event(later)
    await store.finish_turn(ana_turn, "ok", [])
    assert later.seq is not None and later.seq > highest
    assert [e.seq for e in await store.events_after(highest)] == [later.seq]


async def test_turn_events_are_each_turns_stored_events_in_order(store: Store) -> None:
    first_session, first = await new_turn(store, "ana")
    second_session, second = await new_turn(store, "ben")
    _, quiet = await new_turn(store, "ana")
    store.record_event(Event("turn_started", first, first_session, 0.0))
    store.record_event(Event("agent_started", second, second_session, 0.0, "a"))
    store.record_event(Event("agent_token", first, first_session, 0.1, "a", {"text": "x"}))  # live only
    store.record_event(Event("agent_finished", first, first_session, 0.2, "a", {"tokens": 3}))
    # Buffered, not yet committed: the read commits them first, as `events` does.
    found = await store.turn_events([second, first, quiet, 10**9])
    assert found == {
        first: await store.events(first),
        second: await store.events(second),
        quiet: [],
        10**9: [],
    }
    assert [(e.type, e.seq is not None) for e in found[first]] == [("turn_started", True), ("agent_finished", True)]
    assert found[first][1].data == {"tokens": 3}
    assert await store.turn_events([]) == {}


async def test_odd_event_data_is_stored_and_deleted_turns_lose_only_their_events(store: Store) -> None:
    mine_session, mine = await new_turn(store, "u")
    theirs_session, theirs = await new_turn(store, "v")
    store.record_event(Event("conflict", mine, mine_session, 0.1, "rules", {"actions": {"a"}}))  # a set is not JSON
    store.record_event(Event("agent_started", theirs, theirs_session, 0.1, "a"))
    await store.forget_user("v")  # v's buffered event now points at a deleted turn
    await store.write_entry(turn_id=mine, user_id="u", agent="a", status="ok", output=1, error=None)
    events = await store.events(mine)
    assert [e.type for e in events] == ["conflict"]
    assert events[0].data == {"actions": "{'a'}"}
    assert await store.events_after(0, user_id="v") == []


async def test_events_of_many_turns_in_one_commit_are_all_stored_and_read_back_by_turn_ids(store: Store) -> None:
    # More turns than one statement may name: the store asks which exist in chunks.
    started = [await new_turn(store, "ana") for _ in range(600)]
    for session_id, turn_id in started:
        store.record_event(Event("agent_started", turn_id, session_id, 0.1, "a"))
    stored = await store.events_after(0, limit=10_000)  # commits the buffered events first
    assert sorted(e.turn_id for e in stored) == sorted(turn_id for _, turn_id in started)
    # And read back by turn ids, more than one statement may name too (entries alike).
    turn_ids = [turn_id for _, turn_id in started]
    assert {turn_id: [e.seq for e in found] for turn_id, found in (await store.turn_events(turn_ids)).items()} == {
        e.turn_id: [e.seq] for e in stored
    }
    await asyncio.gather(
        *(store.write_entry(turn_id=t, user_id="ana", agent="a", status="ok", output=t, error=None) for t in turn_ids)
    )
    histories = await store.entry_histories(turn_ids, agents=["a"])
    assert {turn_id: [e.output for e in found] for turn_id, found in histories.items()} == {t: [t] for t in turn_ids}


async def test_instance_events_are_agent_events_since_a_time_with_their_turn_status(store: Store) -> None:
    done_session, done = await new_turn(store, "ana")
    live_session, live = await new_turn(store, "ben")
    store.record_event(Event("agent_queued", done, done_session, 0.0, "a", {"instance": "gpu"}, wall=10.0))
    store.record_event(Event("turn_started", live, live_session, 0.0, wall=20.0))  # no agent: not listed
    store.record_event(Event("agent_started", live, live_session, 0.1, "b", {"instance": "cpu"}, wall=21.0))
    await store.finish_turn(done, "ok", [])
    assert await store.instance_events(since_wall=5.0) == [
        InstanceEvent(done, "agent_queued", "a", {"instance": "gpu"}, "ok", 10.0, "ana"),
        InstanceEvent(live, "agent_started", "b", {"instance": "cpu"}, "running", 21.0, "ben"),
    ]
    assert [e.agent for e in await store.instance_events(since_wall=15.0)] == ["b"]
    assert [e.agent for e in await store.instance_events(since_wall=5.0, user_id="ana")] == ["a"]


# -- AgentRegistry -------------------------------------------------------------------------


async def test_agent_versions_are_numbered_and_one_is_active(store: Store) -> None:
    summary = {"dev_passed": 3}
    assert await store.add_agent_version("greeter", forced=False, sandboxed=True, task_turn=7, summary=summary) == 1
    assert await store.add_agent_version("greeter", forced=True, sandboxed=False, task_turn=None, summary={}) == 2
    assert await store.add_agent_version("other", forced=False, sandboxed=True, task_turn=None, summary={}) == 1
    versions = await store.agent_versions("greeter")
    assert [(v.version, v.active, v.forced, v.sandboxed, v.task_turn) for v in versions] == [
        (1, False, False, True, 7),
        (2, True, True, False, None),
    ]
    assert versions[0].summary == summary and versions[0].created_at > 0
    assert [(v.name, v.version) for v in await store.agent_versions()] == [("greeter", 1), ("greeter", 2), ("other", 1)]
    assert await store.activate_agent("greeter", 1) is True
    assert await store.activate_agent("greeter", 9) is False
    assert [v.active for v in await store.agent_versions("greeter")] == [True, False]
    assert await store.remove_agent("greeter") == 2
    assert await store.agent_versions("greeter") == []
    assert await store.remove_agent("greeter") == 0


# -- ApiKeys -------------------------------------------------------------------------------


def api_key(key_id: str, user: str = "ana", *, admin: bool = False, at: float = 1.5) -> ApiKeyRow:
    return ApiKeyRow(key_id, user, f"sha256-of-{key_id}-of-{user}", admin, at, None)


async def test_api_keys_are_added_found_listed_and_revoked_once(store: Store) -> None:
    first, second = api_key("k1", at=10.25), api_key("k2", "root", admin=True, at=20.5)
    assert await store.api_keys() == []
    assert await store.add_api_key(second) and await store.add_api_key(first)
    assert await store.api_key("k1") == first and await store.api_key("k2") == second
    assert await store.api_key("nope") is None
    assert await store.api_keys() == [first, second]  # oldest first
    # An id is one key's: another key under it is refused, and stores nothing.
    assert not await store.add_api_key(api_key("k1", "ben", admin=True))
    assert await store.api_key("k1") == first
    revoked = await store.revoke_api_key("k1")
    assert revoked is not None and revoked.revoked_at is not None and revoked.revoked_at >= revoked.created_at
    assert revoked == ApiKeyRow("k1", "ana", first.hash, False, 10.25, revoked.revoked_at)
    assert await store.api_key("k1") == revoked
    assert await store.revoke_api_key("k1") is None  # revoked already: its time is kept
    assert await store.revoke_api_key("nope") is None
    assert await store.api_keys() == [revoked, second]  # a revoked key still counts


async def test_api_keys_are_one_set_for_every_store_on_the_database(open_shared_store: StoreFactory) -> None:
    first, second = open_shared_store(), open_shared_store()
    try:
        await first.add_api_key(api_key("k1"))
        assert await second.api_key("k1") == api_key("k1")
        assert not await second.add_api_key(api_key("k1", "ben"))
        assert await second.revoke_api_key("k1") is not None
        found = await first.api_key("k1")
        assert found is not None and found.revoked_at is not None
    finally:
        await first.close()
        await second.close()


async def test_forgetting_a_user_keeps_their_keys(store: Store) -> None:
    # Their data goes; their access is the operator's to revoke (`cantata keys revoke`).
    await new_turn(store, "ana")
    await store.add_api_key(api_key("k1"))
    await store.forget_user("ana")
    assert await store.api_key("k1") == api_key("k1")


# -- UserData ------------------------------------------------------------------------------


async def test_forgetting_a_user_removes_the_agent_versions_built_from_their_turns(store: Store) -> None:
    _, ana_turn = await new_turn(store, "ana")
    ana_second = (await store.start_turn(store.new_session("ana", "p"), "again", new_session=True)).id
    _, ben_turn = await new_turn(store, "ben")
    for name, turn in [("mixed", ben_turn), ("mixed", ana_turn), ("mixed", None), ("anas", ana_turn),
                       ("anas", ana_second), ("bens", ben_turn)]:  # fmt: skip
        await store.add_agent_version(name, forced=False, sandboxed=True, task_turn=turn, summary={})
    await store.activate_agent("mixed", 2)  # ana's version is the active one
    forgotten = await store.forget_user("ana")
    assert (forgotten.sessions, forgotten.turns) == (2, (ana_turn, ana_second))
    assert forgotten.agent_versions == (("anas", 1), ("anas", 2), ("mixed", 2)) and forgotten.agents == ("anas",)
    left = await store.agent_versions()
    # The newest remaining version of "mixed" took over; ben's versions are untouched.
    assert [(v.name, v.version, v.active, v.task_turn) for v in left] == [
        ("bens", 1, True, ben_turn), ("mixed", 1, False, ben_turn), ("mixed", 3, True, None)
    ]  # fmt: skip
    # An agent's numbers are never reused (a removed version's folder is never a new one's);
    # an agent removed whole starts again at 1, its folder gone with it.
    assert await store.add_agent_version("mixed", forced=False, sandboxed=True, task_turn=None, summary={}) == 4
    assert await store.add_agent_version("anas", forced=False, sandboxed=True, task_turn=None, summary={}) == 1
    assert (await store.forget_user("ana")) == Forgotten(0, (), (), ())


async def test_export_and_forget_touch_one_user_only(store: Store) -> None:
    for user in ("ana", "ben"):
        session = store.new_session(user, "coaching")
        turn_id = (await store.start_turn(session, f"{user} says hi", new_session=True)).id
        await store.write_entry(
            turn_id=turn_id, user_id=user, agent="persona", status="ok", output={"of": user}, error=None
        )
        store.record_event(Event("agent_finished", turn_id, session.id, 0.1, "persona", user_id=user))
        await store.finish_turn(turn_id, "ok", [("coach", f"hello {user}")])
        await store.set_summary(session.id, f"{user} said hi", 1)
    exported = await store.export_user("ana")
    assert [m["content"] for m in exported["sessions"][0]["turns"][0]["messages"]] == ["ana says hi", "hello ana"]
    assert exported["sessions"][0]["turns"][0]["blackboard"]["persona"]["output"] == {"of": "ana"}
    assert "ben" not in str(exported)
    assert (await store.forget_user("ana")).sessions == 1
    assert await store.export_user("ana") == {"user": "ana", "sessions": []}
    assert await store.sessions("ana") == []
    assert await store.latest_outputs("ana", ["persona"], 10**9) == {}
    assert await store.events_after(0, user_id="ana") == []
    assert (await store.latest_outputs("ben", ["persona"], 10**9))["persona"].output == {"of": "ben"}
    ben = await store.export_user("ben")
    assert ben["sessions"][0]["summary"] == "ben said hi"
    assert [e.user_id for e in await store.events_after(0)] == ["ben"]


async def test_an_export_is_every_session_turn_message_and_entry_of_the_user(store: Store) -> None:
    first = store.new_session("ana", "factory")
    one = (await store.start_turn(first, "build it", new_session=True)).id
    for iteration, verdict in ((1, "fix"), (2, "ship")):  # a loop: the latest entry, then the earlier ones
        await store.write_entry(
            turn_id=one, user_id="ana", agent="critic", status="ok", output=verdict, error=None, iteration=iteration
        )
    await store.write_entry(turn_id=one, user_id="ana", agent="tester", status="failed", output=None, error="boom")
    await store.finish_turn(one, "ok", [("builder", "early"), ("documenter", "done")])
    two = (await store.start_turn(first, "again")).id
    await store.finish_turn(two, "failed", [])
    second = store.new_session("ana", "coaching")
    await store.start_turn(second, "hi", new_session=True)
    await store.set_summary(first.id, "Ana builds.", 2)
    exported = await store.export_user("ana")
    created = [s["created_at"] for s in exported["sessions"]]
    assert exported == {
        "user": "ana",
        "sessions": [
            {
                "session": first.id,
                "pipeline": "factory",
                "created_at": created[0],
                "summary": "Ana builds.",
                "turns": [
                    {
                        "turn": 1,
                        "status": "ok",
                        "messages": [
                            {"role": "user", "agent": None, "content": "build it"},
                            {"role": "assistant", "agent": "builder", "content": "early"},
                            {"role": "assistant", "agent": "documenter", "content": "done"},
                        ],
                        "blackboard": {
                            "critic": {"status": "ok", "output": "ship", "error": None},
                            "tester": {"status": "failed", "output": None, "error": "boom"},
                        },
                        "earlier_iterations": [
                            {"agent": "critic", "iteration": 1, "status": "ok", "output": "fix", "error": None}
                        ],
                    },
                    {
                        "turn": 2,
                        "status": "failed",
                        "messages": [{"role": "user", "agent": None, "content": "again"}],
                        "blackboard": {},
                    },
                ],
            },
            {
                "session": second.id,
                "pipeline": "coaching",
                "created_at": created[1],
                "summary": "",
                "turns": [
                    {
                        "turn": 1,
                        "status": "running",
                        "messages": [{"role": "user", "agent": None, "content": "hi"}],
                        "blackboard": {},
                    }
                ],
            },
        ],
    }
