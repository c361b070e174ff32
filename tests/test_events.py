"""Event subscriptions: in order, with store sequence numbers, bounded, replayable."""

from __future__ import annotations

from pathlib import Path

from cantata.config import InstanceConfig, InstancesConfig
from cantata.events import Dropped, Event, EventBus, Subscription
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import CHAIN


def app_and_pipeline(tmp_path: Path, **scripted: object) -> tuple[Cantata, object]:
    (tmp_path / "p.yaml").write_text(CHAIN)
    config = InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted", **scripted)])  # type: ignore[arg-type]
    return Cantata(config, home=tmp_path / "home"), load_pipeline(tmp_path / "p.yaml")


def drain(subscription: Subscription) -> list[Event | Dropped]:
    items: list[Event | Dropped] = []
    while not subscription._queue.empty():
        items.append(subscription._queue.get_nowait())
    return items


async def test_subscribers_get_every_event_in_order_stored_ones_with_their_seq(tmp_path: Path) -> None:
    app, pipeline = app_and_pipeline(tmp_path, tokens_per_s=5000)
    subscription = app.bus.subscribe()
    result = await app.run_turn(pipeline, "hi")  # type: ignore[arg-type]
    stored = await app.store.events(result.turn_id)
    live = [e for e in drain(subscription) if isinstance(e, Event)]
    await app.close()
    assert live[0].type == "turn_started" and live[-1].type == "turn_delivered"
    assert "agent_token" in [e.type for e in live]
    persisted = [e for e in live if e.type != "agent_token"]
    assert [(e.seq, e.type, e.agent) for e in persisted] == [(s.seq, s.type, s.agent) for s in stored]
    assert all(e.seq is None for e in live if e.type == "agent_token")
    # Tokens of an agent come after its start, as published.
    types = [(e.type, e.agent) for e in live]
    assert types.index(("agent_started", "b")) < types.index(("agent_token", "b"))


async def test_a_slow_subscriber_is_dropped_with_a_marker_and_replays_what_it_missed(tmp_path: Path) -> None:
    app, pipeline = app_and_pipeline(tmp_path)
    slow = app.bus.subscribe(max_queue=4, match=lambda e: e.type != "agent_token")
    keeping_up = app.bus.subscribe()
    result = await app.run_turn(pipeline, "hi")  # type: ignore[arg-type]
    stored = await app.store.events(result.turn_id)
    received = [item async for item in slow]  # ends after the marker
    events, marker = received[:-1], received[-1]
    assert len(events) == 4 and isinstance(marker, Dropped) and marker.after_seq == events[-1].seq  # type: ignore[union-attr]
    assert slow.dropped and slow not in app.bus._subscribers
    assert marker.after_seq is not None
    replayed = await app.store.events_after(marker.after_seq, turn_id=result.turn_id)
    await app.close()
    seen = [e.seq for e in events if isinstance(e, Event)] + [e.seq for e in replayed]
    assert seen == [e.seq for e in stored], "what it got plus the replay is every stored event, once"
    assert len([e for e in drain(keeping_up) if isinstance(e, Event)]) > len(stored)  # the other one is unaffected


async def test_a_subscriber_queue_never_holds_more_than_its_bound() -> None:
    bus = EventBus()  # no store: events are delivered at once, without a seq
    subscription = bus.subscribe(max_queue=10)
    for i in range(10_000):
        bus.publish(Event("agent_token", 1, "s", float(i), "a", {"text": "x"}))
    assert subscription._queue.qsize() == 11  # ten events and the marker
    items = drain(subscription)
    assert isinstance(items[-1], Dropped) and items[-1].after_seq is None
    assert all(isinstance(e, Event) and e.seq is None for e in items[:-1])


async def test_closing_a_subscription_stops_delivery() -> None:
    bus = EventBus()
    subscription = bus.subscribe()
    bus.publish(Event("turn_started", 1, "s", 0.0))
    subscription.close()
    bus.publish(Event("turn_delivered", 1, "s", 0.1))
    assert [e.type for e in drain(subscription) if isinstance(e, Event)] == ["turn_started"]
