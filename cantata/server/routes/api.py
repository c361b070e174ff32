"""The REST API under /api: pipelines, sessions, turns, blackboard, instances, memory, plans.

Each route checks nothing but its parameters and asks the Service (reads.py, service.py)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from cantata.planner.hardware import profile_names
from cantata.server.auth import AuthDep, Caller
from cantata.server.deps import ServiceDep
from cantata.server.errors import error_responses
from cantata.server.protocol import (
    ApprovalDecision,
    ApprovalInfo,
    Blackboard,
    Deleted,
    InstanceHistory,
    InstanceInfo,
    Memory,
    MemoryExport,
    PipelineInfo,
    PlanRequest,
    PlanResponse,
    SessionDetail,
    SessionSummary,
    TurnDetail,
    WhoAmI,
)

router = APIRouter(prefix="/api", tags=["api"])


@router.get("/whoami", response_model=WhoAmI)
async def whoami(auth: AuthDep, caller: Caller) -> WhoAmI:
    return WhoAmI(user=caller.user, admin=caller.admin, auth=await auth.mode())


@router.get("/pipelines", response_model=list[PipelineInfo])
async def pipelines(service: ServiceDep, caller: Caller) -> list[PipelineInfo]:
    return service.pipeline_infos()


@router.get("/pipelines/{name}", response_model=PipelineInfo, responses=error_responses(404))
async def pipeline(service: ServiceDep, name: str, caller: Caller) -> PipelineInfo:
    return service.pipeline_info(name)


@router.get("/sessions", response_model=list[SessionSummary], responses=error_responses(404))
async def sessions(service: ServiceDep, caller: Caller, user: str | None = None) -> list[SessionSummary]:
    return await service.sessions(caller, user)


@router.get("/sessions/{session_id}", response_model=SessionDetail, responses=error_responses(404))
async def session(service: ServiceDep, session_id: str, caller: Caller) -> SessionDetail:
    return await service.session_detail(caller, session_id)


@router.get("/turns/{turn_id}", response_model=TurnDetail, responses=error_responses(404))
async def turn(service: ServiceDep, turn_id: int, caller: Caller) -> TurnDetail:
    return await service.turn_detail(caller, turn_id)


@router.get("/turns/{turn_id}/blackboard", response_model=Blackboard, responses=error_responses(404))
async def blackboard(service: ServiceDep, turn_id: int, caller: Caller) -> Blackboard:
    return await service.blackboard(caller, turn_id)


@router.get("/approvals", response_model=list[ApprovalInfo], responses=error_responses(404))
async def approvals(
    service: ServiceDep,
    caller: Caller,
    user: str | None = None,
    turn_id: int | None = None,
    every: bool = Query(False, description="Decided ones too, not only those pending."),
) -> list[ApprovalInfo]:
    """Tool calls waiting for a person (`approve: true`): the caller's own; an admin's, everyone's."""
    return await service.approvals(caller, user, turn_id=turn_id, every=every)


@router.post("/approvals/{approval_id}", response_model=ApprovalInfo, responses=error_responses(400, 404, 409))
async def decide(service: ServiceDep, approval_id: int, body: ApprovalDecision, caller: Caller) -> ApprovalInfo:
    """Approve (the call runs) or deny (the model reads "denied by a person: REASON"); the turn
    resumes once its last pending approval is decided. Deciding twice: 409."""
    return await service.decide(caller, approval_id, body)


@router.get("/instances", response_model=list[InstanceInfo])
async def instances(service: ServiceDep, caller: Caller, check: bool = False) -> list[InstanceInfo]:
    """Config, queue now and live figures of each instance; with `check=true`, health too
    (an instance this server has not used yet is not loaded just to be checked) and the
    server's own metrics (KV-cache use, prefix-cache hits) where vLLM or llama-server report them.
    A non-admin key sees only its user's calls in the figures, and no server metrics."""
    return await service.instances(caller, check=check)


@router.get("/instances/history", response_model=list[InstanceHistory], responses=error_responses(404))
async def instance_history(
    service: ServiceDep,
    caller: Caller,
    user: str | None = None,
    seconds: float = Query(120.0, ge=10, le=3600, description="How far back."),
    points: int = Query(60, ge=2, le=600, description="Samples, evenly spaced; the last is now."),
) -> list[InstanceHistory]:
    """Each instance's agents queued and running over the last `seconds`, from the event log:
    the caller's own calls (an admin's: everyone's, unless `user` names one)."""
    return await service.instance_history(caller, user, seconds=seconds, points=points)


@router.get("/memory", response_model=Memory, responses=error_responses(404))
async def memory(service: ServiceDep, caller: Caller, user: str | None = None) -> Memory:
    return await service.memory(caller, user)


# exclude_unset: a turn without a loop has no `earlier_iterations`, as the store exports it.
@router.get(
    "/memory/export", response_model=MemoryExport, response_model_exclude_unset=True, responses=error_responses(404)
)
async def export(service: ServiceDep, caller: Caller, user: str | None = None) -> MemoryExport:
    return await service.export(caller, user)


@router.delete("/memory", response_model=Deleted, responses=error_responses(404))
async def forget(service: ServiceDep, caller: Caller, user: str | None = None) -> Deleted:
    return await service.forget(caller, user)


@router.get("/hardware", response_model=list[str])
async def hardware(caller: Caller) -> list[str]:
    """The hardware profiles `/api/plan` knows by name."""
    return profile_names()


@router.post("/plan", response_model=PlanResponse, responses=error_responses(400))
async def plan(service: ServiceDep, body: PlanRequest, caller: Caller) -> PlanResponse:
    return service.plan(body)
