"""What the REST API reads, and who may see what: the Service's read side.

Each method answers one route with its protocol model, so routes stay a line or two and
never reach into the store, the pool or the config themselves. The Service (service.py)
adds the turns the server runs; this half only reads (and checks access)."""

from __future__ import annotations

import time

from cantata.errors import CantataError
from cantata.figures import live_figures, load_history, serving_circuit
from cantata.loader import Pipeline
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.emit import emit_vllm, instances_yaml
from cantata.planner.hardware import resolve_hardware
from cantata.planner.plan import make_plan
from cantata.pool import Instance
from cantata.runtime import Cantata
from cantata.server.dag import pipeline_info
from cantata.server.errors import HTTPError
from cantata.server.ids import storable
from cantata.server.keys import Principal
from cantata.server.protocol import (
    ApprovalInfo,
    Blackboard,
    BlackboardEntry,
    InstanceCircuit,
    InstanceHealth,
    InstanceHistory,
    InstanceInfo,
    InstanceLive,
    InstancePoint,
    InstanceReplica,
    InstanceServer,
    Memory,
    MemoryExport,
    PipelineInfo,
    PlanRequest,
    PlanResponse,
    SessionDetail,
    SessionSummary,
    ToolCallInfo,
    TurnDetail,
    TurnSummary,
)
from cantata.server.timeline import turn_detail
from cantata.server_metrics import scrape
from cantata.store import ApprovalRow, SessionRow, Store, TurnRow

LIVE_WINDOW_S = 3600.0  # the instances' live figures cover the last hour
EVERY_TURN = 2**62  # `latest_outputs` before this: every turn there is


class Reads:
    """The reads of one server, over its runtime and the pipelines it serves."""

    def __init__(self, runtime: Cantata, pipelines: dict[str, Pipeline]) -> None:
        self.runtime = runtime
        self.pipelines = pipelines

    @property
    def store(self) -> Store:
        return self.runtime.store

    # -- who may see what -----------------------------------------------------------------

    def visible_user(self, principal: Principal, user: str | None) -> str:
        """The user whose data a request reads: the caller's own, or (admin only) any."""
        if user is None:
            return principal.user
        if not principal.admin and user != principal.user:
            raise HTTPError(404, f"no user '{user}'", code="user_not_found")
        return user

    def event_filter(self, principal: Principal, user: str | None) -> str | None:
        """Whose events a stream carries: an admin's stream, unless it names a user, has everyone's."""
        if user is None and principal.admin:
            return None
        return self.visible_user(principal, user)

    async def session(self, principal: Principal, session_id: str) -> SessionRow:
        session = await self.store.get_session(session_id)
        if session is None or not (principal.admin or session.user_id == principal.user):
            raise HTTPError(404, f"no session '{session_id}'", code="session_not_found")
        return session

    async def turn(self, principal: Principal, turn_id: int) -> TurnRow:
        row = await self.store.get_turn(turn_id) if storable(turn_id) else None
        if row is None or not (principal.admin or row.user_id == principal.user):
            raise HTTPError(404, f"no turn {turn_id}", code="turn_not_found")
        return row

    async def approval(self, principal: Principal, approval_id: int) -> ApprovalRow:
        rows = await self.store.approvals(approval_id=approval_id) if storable(approval_id) else []
        if not rows or not (principal.admin or rows[0].user_id == principal.user):
            raise HTTPError(404, f"no approval {approval_id}", code="approval_not_found")
        return rows[0]

    # -- approvals ------------------------------------------------------------------------

    async def approvals(
        self, principal: Principal, user: str | None, *, turn_id: int | None, every: bool
    ) -> list[ApprovalInfo]:
        """The caller's approvals (an admin's: everyone's, unless it names a user), pending
        ones only unless `every`; of one turn if given."""
        if turn_id is not None:
            await self.turn(principal, turn_id)
        rows = await self.store.approvals(
            user_id=self.event_filter(principal, user), turn_id=turn_id, pending=not every
        )
        return [ApprovalInfo.model_validate(row.as_json()) for row in rows]

    # -- pipelines ------------------------------------------------------------------------

    def pipeline(self, name: str) -> Pipeline:
        """The pipeline a chat request names as its model; none is a 404 `model_not_found`, as
        OpenAI answers it (clients branch on that code)."""
        found = self.pipelines.get(name)
        if found is None:
            known = ", ".join(sorted(self.pipelines))
            raise HTTPError(404, f"unknown model '{name}'; the models are: {known}", code="model_not_found")
        return found

    def pipeline_info(self, name: str) -> PipelineInfo:
        """A pipeline's DAG with the instance each agent's model alias is bound to (404 if none)."""
        found = self.pipelines.get(name)
        if found is None:
            raise HTTPError(404, f"no pipeline '{name}'", code="pipeline_not_found")
        bound = {}
        for agent in found.spec.agents:
            instance = self.runtime.config.instance_for(agent.model)
            bound[agent.model] = instance.name if instance else None
        return pipeline_info(found, bound)

    def pipeline_infos(self) -> list[PipelineInfo]:
        return [self.pipeline_info(name) for name in self.pipelines]

    # -- sessions and turns ---------------------------------------------------------------

    async def sessions(self, principal: Principal, user: str | None) -> list[SessionSummary]:
        rows = await self.store.sessions(self.visible_user(principal, user))
        return [
            SessionSummary(
                id=s.id, user=s.user_id, pipeline=s.pipeline, created_at=s.created_at, turns=s.turns, summary=s.summary
            )
            for s in rows
        ]

    async def session_detail(self, principal: Principal, session_id: str) -> SessionDetail:
        row = await self.session(principal, session_id)
        turns = await self.store.turns(session_id)
        summary, _ = await self.store.session_summary(session_id)
        pipeline = self.pipelines.get(row.pipeline)
        early = pipeline.deliverer("early") if pipeline else None
        final = pipeline.deliverer("final") if pipeline else None
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
                    early=_reply_of(t, early.name if early else None),
                    merged=_reply_of(t, final.name if final else None),
                )
                for t in turns
            ],
        )

    async def turn_detail(self, principal: Principal, turn_id: int) -> TurnDetail:
        row = await self.turn(principal, turn_id)
        events = await self.store.events(turn_id)
        entries = await self.store.entries(turn_id)
        return TurnDetail.model_validate(turn_detail(row, events, entries, self.pipelines.get(row.pipeline)))

    async def blackboard(self, principal: Principal, turn_id: int) -> Blackboard:
        row = await self.turn(principal, turn_id)
        events = await self.store.events(turn_id)
        entries = await self.store.entries(turn_id)
        calls = (await self.store.tool_calls([turn_id]))[turn_id]
        return Blackboard(
            turn_id=turn_id,
            pipeline=row.pipeline,
            entries=[
                BlackboardEntry(
                    agent=e.agent,
                    status=e.status,
                    output=e.output,
                    error=e.error,
                    tool_calls=[
                        ToolCallInfo.model_validate(c.as_json())
                        for c in calls
                        if (c.agent, c.iteration) == (e.agent, e.iteration)
                    ],
                )
                for e in entries.values()
            ],
            conflicts=[e.data for e in events if e.type == "conflict"],
        )

    # -- instances ------------------------------------------------------------------------

    async def instances(self, principal: Principal, *, check: bool) -> list[InstanceInfo]:
        """An admin sees every user's figures and the servers' own metrics; any other key
        only the figures of its user's calls (how busy others keep an instance is theirs)."""
        everyone = principal.admin
        since = time.time() - LIVE_WINDOW_S
        live = await live_figures(self.store, since_wall=since, user_id=None if everyone else principal.user)
        rows = []
        pool = self.runtime.pool
        for inst in self.runtime.config.instances:
            running = pool.instances.get(inst.name)
            told_live = live.get(inst.name)
            # This server's breaker, else the last one told in the event log (another process's).
            told = running.breaker.as_json() if running else told_live.circuit if told_live else None
            figures = InstanceLive.model_validate(told_live.as_json()) if told_live else InstanceLive()
            servers = [pool.instances.get(own.name) for own in inst.replicas()] if inst.urls else [running]
            row = InstanceInfo(
                name=inst.name,
                backend=inst.backend,
                model=inst.model,
                url=inst.url,
                serves=list(inst.serves),
                max_concurrency=inst.concurrency(),
                queued_now=sum(s.stats.queued for s in servers if s) if everyone else figures.queued,
                running_now=sum(s.stats.running for s in servers if s) if everyone else figures.running,
                live=figures,
                circuit=InstanceCircuit.model_validate(told or {}),
            )
            if inst.urls:
                row.replicas = [
                    InstanceReplica(
                        name=own.name,
                        url=own.url or "",
                        queued_now=server.stats.queued if server and everyone else None,
                        running_now=server.stats.running if server and everyone else None,
                        circuit=InstanceCircuit.model_validate(
                            server.breaker.as_json()
                            if server
                            else told_live.replicas.get(own.name, {})
                            if told_live
                            else {}
                        ),
                    )
                    for own, server in zip(inst.replicas(), servers, strict=True)
                ]
                row.circuit = InstanceCircuit.model_validate(
                    serving_circuit([replica.circuit.model_dump() for replica in row.replicas])
                )
            if check:
                await _check_row(row, servers, everyone=everyone)
            rows.append(row)
        return rows

    async def instance_history(
        self, principal: Principal, user: str | None, *, seconds: float, points: int
    ) -> list[InstanceHistory]:
        names = [inst.name for inst in self.runtime.config.instances]
        history = await load_history(
            self.store,
            names,
            until=time.time(),
            seconds=seconds,
            points=points,
            user_id=self.event_filter(principal, user),
        )
        return [
            InstanceHistory(
                name=name,
                step_s=seconds / points,
                points=[InstancePoint(at=p.at, queued=p.queued, running=p.running) for p in history[name]],
            )
            for name in names
        ]

    # -- memory ---------------------------------------------------------------------------

    async def memory(self, principal: Principal, user: str | None) -> Memory:
        who = self.visible_user(principal, user)
        found: dict[str, dict[str, object]] = {}
        for name, p in self.pipelines.items():
            latest = await self.store.latest_outputs(who, p.memory_agents, before_turn=EVERY_TURN)
            if latest:
                found[name] = {agent: {"turn_id": e.turn_id, "output": e.output} for agent, e in latest.items()}
        count = len(await self.store.sessions(who))
        return Memory(user=who, memory=found, sessions=count)

    async def export(self, principal: Principal, user: str | None) -> MemoryExport:
        return MemoryExport.model_validate(await self.store.export_user(self.visible_user(principal, user)))

    # -- plans ----------------------------------------------------------------------------

    def plan(self, body: PlanRequest) -> PlanResponse:
        pipeline = self.pipelines.get(body.pipeline)
        if pipeline is None:
            raise HTTPError(400, f"unknown pipeline '{body.pipeline}'; known: {', '.join(self.pipelines)}")
        catalog = load_catalog()
        forced = [parse_model_arg(m, catalog) for m in body.models]
        target = resolve_hardware(body.hardware)
        result = make_plan(
            pipeline.spec, target, forced, context=body.context, concurrency=body.concurrency, catalog=catalog
        )
        return PlanResponse(plan=result, launch=emit_vllm(result), instances_yaml=instances_yaml(result))


def _reply_of(turn: TurnRow, agent: str | None) -> str | None:
    """The text `agent` delivered in the turn (the chat shows the early and the merged reply
    apart, as it did while they streamed)."""
    return next((text for who, text in turn.replies if who == agent), None) if agent else None


async def _health(instance: Instance | None) -> InstanceHealth:
    if instance is None:
        return InstanceHealth(reachable=None, note="not used by this server yet")
    try:
        info = await instance.backend.check()
    except CantataError as exc:
        return InstanceHealth(reachable=False, error=str(exc))
    return InstanceHealth(reachable=True, serving=info.model)


async def _check_row(row: InstanceInfo, servers: list[Instance | None], *, everyone: bool) -> None:
    """Health, and for an admin the server's own metrics: of each replica, and of the instance
    (reachable while any of its replicas is)."""
    if row.replicas is None:
        row.health = await _health(servers[0])
        if everyone and row.backend == "openai" and row.url:
            row.server = await _server(row.url)
        return
    for replica, server in zip(row.replicas, servers, strict=True):
        replica.health = await _health(server)
        replica.server = await _server(replica.url) if everyone else None
    healths = [replica.health for replica in row.replicas if replica.health is not None]
    if any(h.reachable for h in healths):
        row.health = next(h for h in healths if h.reachable)
    elif all(h.reachable is None for h in healths):
        row.health = InstanceHealth(reachable=None, note="not used by this server yet")
    else:
        row.health = InstanceHealth(reachable=False, error="; ".join(h.error for h in healths if h.error))


async def _server(url: str) -> InstanceServer | None:
    server = await scrape(url)
    return InstanceServer.model_validate(server.as_json()) if server else None
