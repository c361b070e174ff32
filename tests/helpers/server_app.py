"""A Cantata server app in process, over scripted instances, for the API tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cantata.applications import forgetters, routers
from cantata.config import load_config
from cantata.server import create_app
from cantata.server.keys import KeyRing
from cantata.store import open_store

ROOT = "http://127.0.0.1:8000"  # an open loopback server takes only loopback names as Host


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[FastAPI]:
    """The app with its lifespan running (ASGITransport does not run it)."""
    async with app.router.lifespan_context(app):
        yield app


def client(app: FastAPI, key: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ROOT, headers=headers, timeout=30)


@asynccontextmanager
async def mcp_over(app: object, key: str | None = None) -> AsyncIterator[Client]:
    """The MCP SDK's client on the app's /mcp, in process."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = httpx2.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT, headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(f"{ROOT}/mcp", http_client=http)) as mcp:
            yield mcp


def make_app(config: Path, home: Path, **options: object) -> FastAPI:
    """The app `cantata serve` runs: the server's API and what the applications add."""
    return create_app(
        load_config(config),
        home=home,
        routers=routers(),
        forgetters=forgetters(),
        **options,  # type: ignore[arg-type]
    )


async def new_key(home: Path, user: str, *, admin: bool = False, database: str | None = None) -> str:
    """A new key of the store under `home`, or of the PostgreSQL `database`, as `cantata keys create` makes it."""
    store = open_store(home, database)
    try:
        return (await KeyRing(store).create(user, admin=admin))[1]
    finally:
        await store.close()


def chat_body(
    text: str, *, model: str = "example", history: list[tuple[str, str]] | None = None, stream: bool = False
) -> dict[str, object]:
    messages: list[dict[str, str]] = []
    for asked, said in history or []:
        messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": said}]
    messages.append({"role": "user", "content": text})
    return {"model": model, "messages": messages, "stream": stream}
