"""`create_app()`: the FastAPI app, whose lifespan owns one Cantata runtime.

Routes reach the runtime through `app.state.service`; nothing global, so tests build as
many apps as they like, each with its own home, config and metrics."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from cantata import __version__
from cantata.config import InstancesConfig, cantata_home, load_config
from cantata.errors import UserError
from cantata.runtime import Cantata
from cantata.server.auth import Admin, Auth, is_loopback
from cantata.server.errors import error_body, install_error_handlers
from cantata.server.keys import KeyRing
from cantata.server.protocol import Health
from cantata.server.routes import api, events, openai
from cantata.server.service import Service

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1 << 20  # 1 MiB: a long conversation fits many times over


def check_bind(host: str, keys: KeyRing) -> None:
    """Refuse to expose an open server: without keys, only loopback."""
    if not is_loopback(host) and not keys.configured():
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
    max_body: int = MAX_BODY,
) -> FastAPI:
    home = home or cantata_home()
    config = config or load_config()
    extra = list(pipelines)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        keys = await KeyRing.open(home)
        check_bind(host, keys)
        runtime = Cantata(config, home=home)
        app.state.auth = Auth(keys, loopback=is_loopback(host))
        app.state.service = Service(runtime, extra_pipelines=extra)
        try:
            yield
        finally:
            await app.state.service.drain()
            await runtime.close()
            keys.close()

    app = FastAPI(
        title="Cantata",
        version=__version__,
        description="Every pipeline as an OpenAI-compatible model, and a REST and event API over its turns.",
        lifespan=lifespan,
    )
    install_error_handlers(app)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > max_body:
            return JSONResponse(
                error_body(413, f"the request body is over {max_body} bytes", "body_too_large"), status_code=413
            )
        return await call_next(request)

    app.include_router(openai.router)
    app.include_router(api.router)
    app.include_router(events.router)

    @app.get("/healthz", response_model=Health, tags=["ops"])
    async def healthz(request: Request) -> Health:
        service: Service = request.app.state.service
        return Health(version=__version__, turns_running=len(service.running), auth=request.app.state.auth.mode())

    @app.get("/metrics", tags=["ops"], response_class=Response)
    async def metrics(request: Request, caller: Admin) -> Response:
        """Every user's turns counted together: an operator's view (admin keys, or open mode)."""
        service: Service = request.app.state.service
        return Response(service.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    app.mount("/", StaticFiles(directory=STATIC, html=True), name="dashboard")
    return app


def run_server(*, host: str, port: int, config_path: Path | None, pipelines: Iterable[Path] = ()) -> None:
    """`cantata serve`: check what can be checked before binding, then run uvicorn."""
    import uvicorn

    home = cantata_home()
    config = load_config(config_path)
    keys = asyncio.run(KeyRing.open(home))
    try:
        check_bind(host, keys)
    finally:
        keys.close()
    app = create_app(config, home=home, host=host, pipelines=pipelines)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"Cantata dashboard: http://{shown}:{port}/  (chat: http://{shown}:{port}/#/chat)", flush=True)
    print(f"OpenAI-compatible API: http://{shown}:{port}/v1  (each pipeline is a model)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=30)


