"""The REST API under /api: pipelines, sessions, turns, blackboard, instances, memory, plans."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from cantata.errors import CantataError
from cantata.factory.progress import task_summary
from cantata.figures import live_figures
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.emit import emit_vllm, instances_yaml
from cantata.planner.hardware import profile_names, resolve_hardware
from cantata.planner.plan import make_plan
from cantata.pool import Instance
from cantata.server.auth import Caller
from cantata.server.dag import pipeline_info
from cantata.server.errors import HTTPError
from cantata.server.protocol import (
    Blackboard,
    BlackboardEntry,
    Deleted,
    InstanceInfo,
    Memory,
    PipelineInfo,
    PlanRequest,
    SessionDetail,
    SessionSummary,
    TurnDetail,
    TurnSummary,
    WhoAmI,
)
from cantata.server.service import Service
from cantata.server.timeline import turn_detail
from cantata.server_metrics import scrape

router = APIRouter(prefix="/api", tags=["api"])
LIVE_WINDOW_S = 3600.0
FACTORY = "factory"  # the bundled pipeline whose turns are the task board's tasks


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


@router.get("/whoami", response_model=WhoAmI)
async def whoami(request: Request, caller: Caller) -> WhoAmI:
    return WhoAmI(user=caller.user, admin=caller.admin, auth=request.app.state.auth.mode())


@router.get("/pipelines", response_model=list[PipelineInfo])
async def pipelines(request: Request, caller: Caller) -> list[PipelineInfo]:
    service = _service(request)
    return [_info(service, name) for name in service.pipelines]


@router.get("/pipelines/{name}", response_model=PipelineInfo)
async def pipeline(request: Request, name: str, caller: Caller) -> PipelineInfo:
    service = _service(request)
    if name not in service.pipelines:
        raise HTTPError(404, f"no pipeline '{name}'", code="pipeline_not_found")
    return _info(service, name)


def _info(service: Service, name: str) -> PipelineInfo:
    p = service.pipelines[name]
    return pipeline_info(p, {a.model: service.instance_of(a.model) for a in p.spec.agents})


@router.get("/sessions", response_model=list[SessionSummary])
async def sessions(request: Request, caller: Caller, user: str | None = None) -> list[SessionSummary]:
    service = _service(request)
    rows = await service.store.sessions(service.visible_user(caller, user))
    return [
        SessionSummary(
            id=s.id, user=s.user_id, pipeline=s.pipeline, created_at=s.created_at, turns=s.turns, summary=s.summary
        )
        for s in rows
    ]


@router.get("/sessions/{session_id}", response_model=SessionDetail)
async def session(request: Request, session_id: str, caller: Caller) -> SessionDetail:
    service = _service(request)
    row = await service.session(caller, session_id)
    turns = await service.store.turns(session_id)
    summary, _ = await service.store.session_summary(session_id)
    return SessionDetail(
        id=row.id,
        user=row.user_id,
        pipeline=row.pipeline,
        turns=len(turns),
        summary=summary,
        turn_list=[
            TurnSummary(
                turn_id=t.id,
                number=t.number,
                session=t.session_id,
                status=t.status,
                started_at=t.started_at,
                finished_at=t.finished_at,
                message=t.message,
                reply=t.replies[-1][1] if t.replies else None,
            )
            for t in turns
        ],
    )


@router.get("/turns/{turn_id}", response_model=TurnDetail)
async def turn(request: Request, turn_id: int, caller: Caller) -> dict[str, Any]:
    service = _service(request)
    row = await service.turn(caller, turn_id)
    events = await service.store.events(turn_id)
    entries = await service.store.entries(turn_id)
    return turn_detail(row, events, entries, service.pipelines.get(row.pipeline))


@router.get("/turns/{turn_id}/blackboard", response_model=Blackboard)
async def blackboard(request: Request, turn_id: int, caller: Caller) -> Blackboard:
    service = _service(request)
    await service.turn(caller, turn_id)
    events = await service.store.events(turn_id)
    entries = await service.store.entries(turn_id)
    return Blackboard(
        turn_id=turn_id,
        entries=[
            BlackboardEntry(agent=e.agent, status=e.status, output=e.output, error=e.error) for e in entries.values()
        ],
        conflicts=[e.data for e in events if e.type == "conflict"],
    )


@router.get("/instances", response_model=list[InstanceInfo])
async def instances(request: Request, caller: Caller, check: bool = False) -> list[InstanceInfo]:
    """Config, queue now and live figures of each instance; with `check=true`, health too
    (an instance this server has not used yet is not loaded just to be checked) and the
    server's own metrics (KV-cache use, prefix-cache hits) where vLLM or llama-server report them."""
    service = _service(request)
    live = await live_figures(service.store, since_wall=time.time() - LIVE_WINDOW_S)
    rows = []
    for inst in service.runtime.config.instances:
        running = service.runtime.pool.instances.get(inst.name)
        row = InstanceInfo(
            name=inst.name,
            backend=inst.backend,
            model=inst.model,
            url=inst.url,
            serves=list(inst.serves),
            max_concurrency=inst.concurrency(),
            queued_now=running.stats.queued if running else 0,
            running_now=running.stats.running if running else 0,
            live=live[inst.name].as_json() if inst.name in live else {},
        )
        if check:
            row.health = await _health(running)
            if inst.backend == "openai" and inst.url:
                server = await scrape(inst.url)
                row.server = server.as_json() if server else None
        rows.append(row)
    return rows


async def _health(instance: Instance | None) -> dict[str, Any]:
    if instance is None:
        return {"reachable": None, "error": None, "note": "not used by this server yet"}
    try:
        info = await instance.backend.check()
    except CantataError as exc:
        return {"reachable": False, "error": str(exc)}
    return {"reachable": True, "error": None, "serving": info.model}


def _memory_user(service: Service, caller: Any, user: str | None) -> str:
    return service.visible_user(caller, user)


@router.get("/memory", response_model=Memory)
async def memory(request: Request, caller: Caller, user: str | None = None) -> Memory:
    service = _service(request)
    who = _memory_user(service, caller, user)
    found: dict[str, Any] = {}
    for name, p in service.pipelines.items():
        latest = await service.store.latest_outputs(who, p.memory_agents, before_turn=2**62)
        if latest:
            found[name] = {agent: {"turn_id": e.turn_id, "output": e.output} for agent, e in latest.items()}
    count = len(await service.store.sessions(who))
    return Memory(user=who, memory=found, sessions=count)


@router.get("/memory/export")
async def export(request: Request, caller: Caller, user: str | None = None) -> dict[str, Any]:
    service = _service(request)
    result: dict[str, Any] = await service.store.export_user(_memory_user(service, caller, user))
    return result


@router.delete("/memory", response_model=Deleted)
async def forget(request: Request, caller: Caller, user: str | None = None) -> Deleted:
    service = _service(request)
    who = _memory_user(service, caller, user)
    await service.runtime.settle()  # a compaction in flight would write after the delete
    deleted = await service.store.forget_user(who)
    service.index.forget_user(who)
    return Deleted(user=who, sessions_deleted=deleted)


@router.get("/hardware")
async def hardware(caller: Caller) -> list[str]:
    return profile_names()


@router.post("/plan")
async def plan(request: Request, body: PlanRequest, caller: Caller) -> dict[str, Any]:
    service = _service(request)
    pipeline = service.pipelines.get(body.pipeline)
    if pipeline is None:
        raise HTTPError(400, f"unknown pipeline '{body.pipeline}'; known: {', '.join(service.pipelines)}")
    try:
        catalog = load_catalog()
        forced = [parse_model_arg(m, catalog) for m in body.models]
        target = resolve_hardware(body.hardware)
        result = make_plan(
            pipeline.spec, target, forced, context=body.context, concurrency=body.concurrency, catalog=catalog
        )
    except CantataError:
        raise
    plan_json: dict[str, Any] = result.model_dump(mode="json")
    return {"plan": plan_json, "launch": emit_vllm(result), "instances_yaml": instances_yaml(result)}


@router.get("/tasks")
async def tasks(request: Request, caller: Caller, user: str | None = None) -> dict[str, Any]:
    """The agent factory's task board: each factory turn of the user's (newest first) with
    the role at work, its stage, the loop's iteration, tests passed and tokens so far."""
    service = _service(request)
    who = service.visible_user(caller, user)
    board, after = [], 0
    for session in await service.store.sessions(who):
        if session.pipeline != FACTORY:
            continue
        for turn in await service.store.turns(session.id):
            events = await service.store.events(turn.id)
            after = max([after, *(e.seq for e in events)])
            history = await service.store.entry_history(turn.id)
            board.append(task_summary(turn, list(events), history))
    board.sort(key=lambda t: t["turn_id"], reverse=True)
    # `after`: the last event read here, for the live stream to follow on from.
    note = "No factory task yet: run `cantata factory \"REQUEST\"`, or send a request to the model 'factory'."
    return {"user": who, "tasks": board, "after": after, "note": note}
