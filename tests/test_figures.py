"""Instance figures from the event log: the recent history a dashboard chart starts from."""

from __future__ import annotations

from cantata.events import Event, EventType
from cantata.figures import LoadPoint, load_history
from cantata.store import SqliteStore, Store


async def started(store: Store, user: str) -> tuple[str, int]:
    session = store.new_session(user, "p")
    return session.id, (await store.start_turn(session, "hi", new_session=True)).id


async def test_the_history_is_each_steps_peak_of_calls_queued_and_running_per_user() -> None:
    store = SqliteStore(":memory:")
    try:
        ana_session, ana = await started(store, "ana")
        cut_session, cut = await started(store, "ana")
        ben_session, ben = await started(store, "ben")

        def event(kind: EventType, turn: int, session: str, agent: str, instance: str, wall: float) -> None:
            store.record_event(Event(kind, turn, session, 0.0, agent, {"instance": instance}, wall=wall))

        event("agent_queued", ana, ana_session, "a", "gpu", 100.5)
        event("agent_started", ana, ana_session, "a", "gpu", 100.7)
        event("agent_queued", ana, ana_session, "b", "gpu", 101.0)
        event("agent_finished", ana, ana_session, "a", "gpu", 102.5)
        event("agent_started", ana, ana_session, "b", "gpu", 102.5)
        event("agent_finished", ana, ana_session, "b", "gpu", 103.5)
        event("agent_started", ana, ana_session, "early", "cpu", 96.0)  # over before the history starts
        event("agent_finished", ana, ana_session, "early", "cpu", 97.0)
        event("agent_started", ana, ana_session, "x", "gpu", 104.2)
        event("agent_finished", ana, ana_session, "x", "gpu", 104.4)
        event("agent_queued", ana, ana_session, "y", "elsewhere", 101.0)  # an instance no longer configured
        # A call started in a turn that never finished it (the process died): not waiting.
        event("agent_started", cut, cut_session, "c", "gpu", 101.5)
        # Ben's turn is still running: his call waits until now.
        event("agent_queued", ben, ben_session, "d", "cpu", 101.5)
        await store.finish_turn(ana, "ok", [])
        await store.finish_turn(cut, "failed", [])

        everyone = await load_history(store, ["gpu", "cpu", "idle"], until=105.0, seconds=5, points=5, user_id=None)
        anas = await load_history(store, ["gpu", "cpu"], until=105.0, seconds=5, points=5, user_id="ana")
    finally:
        await store.close()

    def series(history: dict[str, list[LoadPoint]], name: str) -> list[tuple[float, int, int]]:
        return [(p.at, p.queued, p.running) for p in history[name]]

    # Each step's peak: b waits from 101.0 to 102.5, so in the step ending at 103 too; a call
    # shorter than a step (x, 104.2 to 104.4) still shows.
    assert series(everyone, "gpu") == [(101.0, 1, 1), (102.0, 1, 1), (103.0, 1, 1), (104.0, 0, 1), (105.0, 0, 1)]
    assert series(everyone, "cpu") == [(101.0, 0, 0), (102.0, 1, 0), (103.0, 1, 0), (104.0, 1, 0), (105.0, 1, 0)]
    assert series(everyone, "idle") == [(at, 0, 0) for at in (101.0, 102.0, 103.0, 104.0, 105.0)]
    assert series(anas, "gpu") == series(everyone, "gpu")
    assert [q + r for _, q, r in series(anas, "cpu")] == [0] * 5  # ben's call is his
