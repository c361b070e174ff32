"""`create_app()`: the FastAPI app, whose lifespan owns one Cantata runtime.

Routes reach the runtime through the Service (`ServiceDep`, deps.py); nothing global, so
tests build as many apps as they like, each with its own home, config and metrics. Routers
that applications offer (the factory's task board) are passed in: the server knows none
of them by name (`cantata.applications` lists them for `cantata serve`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from math import ceil
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cantata import __version__, telemetry
from cantata.config import InstancesConfig, Workers, cantata_home, database_url, load_config
from cantata.errors import UserError
from cantata.runtime import Cantata, Forgetter
from cantata.server.auth import Admin, Auth, is_loopback
from cantata.server.deps import ServiceDep
from cantata.server.errors import error_body, error_responses, install_error_handlers
from cantata.server.keys import KeyRing
from cantata.server.logs import AccessLog, LogFormat, configure_logging, log_failed_agent
from cantata.server.openapi import complete_openapi
from cantata.server.protocol import Health
from cantata.server.rebinding import LoopbackOnly
from cantata.server.routes import api, events, openai
from cantata.server.service import Service
from cantata.store import open_store
from cantata.store.event_feed import event_feed

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1 << 20  # 1 MiB: a long conversation fits many times over
GRACE_S = 30.0  # at SIGTERM, how long running turns may take to finish before they are left resumable
SHUTDOWN_MARGIN_S = 5  # for the cut turns' streams to end before uvicorn cancels their connections


class BodyLimit:
    """413 for a body over the limit, as pure ASGI: Starlette's BaseHTTPMiddleware would
    pass every streamed chunk through an extra task and memory stream."""

    def __init__(self, app: ASGIApp, *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.max_body:
                body = error_body(413, f"the request body is over {self.max_body} bytes", "body_too_large")
                await JSONResponse(body, status_code=413)(scope, receive, send)
                return
            received = 0
            refused = False

            async def counted() -> Message:
                # A chunked body has no length to check up front: count it as it comes, and
                # past the limit answer 413 and tell the app the client is gone.
                nonlocal received, refused
                message = await receive()
                received += len(message.get("body", b""))
                if received > self.max_body and not refused:
                    refused = True
                    body = error_body(413, f"the request body is over {self.max_body} bytes", "body_too_large")
                    await JSONResponse(body, status_code=413)(scope, receive, send)
                    return {"type": "http.disconnect"}
                return message

            async def sending(message: Message) -> None:
                if not refused:  # after the 413, whatever the app answers goes nowhere
                    await send(message)

            await self.app(scope, counted, sending)
            return
        await self.app(scope, receive, send)


async def check_bind(host: str, keys: KeyRing) -> None:
    """Refuse to expose an open server: without keys, only loopback."""
    if not is_loopback(host) and not await keys.configured():
        raise UserError(
            f"refusing to serve on {host} without API keys: create one with `cantata keys create --user NAME`,"
            " or bind 127.0.0.1"
        )


def create_app(
    config: InstancesConfig | None = None,
    *,
    home: Path | None = None,
    host: str = "127.0.0.1",
    pipelines: Iterable[Path] = (),
    routers: Iterable[APIRouter] = (),
    forgetters: Iterable[Forgetter] = (),
    max_body: int = MAX_BODY,
    grace_s: float = GRACE_S,
    announce: Callable[[str], None] = lambda line: None,
    workers: Workers = "local",
) -> FastAPI:
    """`announce` gets the lines an operator should see: the unfinished turns resumed at
    start, those left at shutdown. `routers` and `forgetters` are what applications add
    (cantata/applications.py). `workers`: "local" runs turns in this process, "queue" queues
    them for `cantata worker` processes (the state on PostgreSQL)."""
    home = home or cantata_home()
    config = config or load_config()
    extra = list(pipelines)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Cantata(config, home=home)
        queue = None
        if workers == "queue":  # procrastinate is imported only then (the `postgres` extra)
            from cantata.turn_queue import TurnQueue, queue_url

            queue = TurnQueue(queue_url(config))
        async with AsyncExitStack() as closing:
            # Last at shutdown: uvicorn ends the process with the SIGTERM it handled, which skips
            # the exit hook that would send the spans still queued (telemetry.flush).
            closing.callback(telemetry.flush)
            closing.push_async_callback(runtime.close)
            # The keys are in the state's store: every server on one database shares them.
            keys = KeyRing(runtime.store)
            await check_bind(host, keys)
            app.state.auth = Auth(keys, loopback=is_loopback(host))
            feed = await closing.enter_async_context(event_feed(runtime.store, runtime.bus))
            if queue is not None:
                await queue.open()
                closing.push_async_callback(queue.close)
            service = app.state.service = Service(
                runtime,
                extra_pipelines=extra,
                grace_s=grace_s,
                announce=announce,
                forgetters=forgetters,
                feed=feed,
                queue=queue,
            )
            closing.push_async_callback(service.drain)
            closing.callback(runtime.bus.listen(log_failed_agent))
            if queue is None:  # else the workers resume what a crash left: they own the turns
                service.resume_unfinished()
            yield

    app = FastAPI(
        title="Cantata",
        version=__version__,
        description="Every pipeline as an OpenAI-compatible model, and a REST and event API over its turns.",
        lifespan=lifespan,
        # FastAPI's own request spans, when tracing is on (telemetry.py): the parent of a turn's
        # span. Its spans of each dependency and of serialization would only bury the turn's.
        telemetry={"tracer_provider": telemetry.provider(), "operation_spans": False},
    )
    install_error_handlers(app)

    app.add_middleware(BodyLimit, max_body=max_body)
    app.add_middleware(LoopbackOnly)  # before the body is read: a refused request's is not wanted
    app.add_middleware(AccessLog)  # outermost: a body refused with 413 is logged too

    app.include_router(openai.router)
    app.include_router(api.router)
    app.include_router(events.router)
    for router in routers:
        app.include_router(router)
    complete_openapi(app)

    @app.get("/healthz", response_model=Health, tags=["ops"])
    async def healthz() -> Health:
        return Health()

    @app.get("/metrics", tags=["ops"], response_class=PlainTextResponse, responses=error_responses(403))
    async def metrics(service: ServiceDep, caller: Admin) -> Response:
        """Every user's turns counted together: an operator's view (admin keys, or open mode)."""
        return Response(service.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    app.mount("/", StaticFiles(directory=STATIC, html=True), name="dashboard")
    return app


async def reach_store(home: Path, config: InstancesConfig, host: str) -> None:
    """Open the store once, before `cantata serve` binds: a database that cannot be reached
    fails in one line (StoreUnavailable, exit 2), not every request after; and an open
    server (no keys in it) is refused on any but a loopback address."""
    store = open_store(home, database_url(config))
    try:
        await store.get_session("")  # the first read opens the database (and migrates it)
        await check_bind(host, KeyRing(store))
    finally:
        await store.close()


def run_server(
    *,
    host: str,
    port: int,
    config_path: Path | None,
    pipelines: Iterable[Path] = (),
    routers: Iterable[APIRouter] = (),
    forgetters: Iterable[Forgetter] = (),
    grace_s: float = GRACE_S,
    log_format: LogFormat = "text",
    workers: Workers = "local",
) -> None:
    """`cantata serve`: check what can be checked before binding, then run uvicorn. On
    SIGTERM or Ctrl-C, new turns are refused at once (503), running ones get `grace_s` to
    finish, and the rest are left for the next start to resume."""
    configure_logging(log_format)
    home = cantata_home()
    config = load_config(config_path)
    if workers == "queue":
        from cantata.turn_queue import queue_url

        queue_url(config)  # SQLite: one line and exit 2, before binding
    asyncio.run(reach_store(home, config, host))
    app = create_app(
        config,
        home=home,
        host=host,
        pipelines=pipelines,
        routers=routers,
        forgetters=forgetters,
        grace_s=grace_s,
        announce=lambda line: print(line, flush=True),
        workers=workers,
    )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"Cantata dashboard: http://{shown}:{port}/  (chat: http://{shown}:{port}/#/chat)", flush=True)
    print(f"OpenAI-compatible API: http://{shown}:{port}/v1  (each pipeline is a model)", flush=True)
    # uvicorn waits this long for open connections, then cancels them: longer than the grace,
    # after which the service cuts its turns and their streams end in order (no traceback).
    # uvicorn's own lines go through the same handler (log_config=None keeps ours); its access
    # log is replaced by AccessLog's, which has the same fields in both formats.
    settings = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=ceil(grace_s) + SHUTDOWN_MARGIN_S,
    )
    _Server(settings, app).run()


class _Server(uvicorn.Server):
    """uvicorn's server, which first tells the service to stop taking turns: uvicorn itself
    keeps answering the requests on open connections until they close."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        service: Service | None = getattr(self.app.state, "service", None)  # set by the lifespan
        if service is not None:
            service.stop_accepting()
        super().handle_exit(sig, frame)
