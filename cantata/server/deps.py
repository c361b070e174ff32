"""What a route may ask FastAPI for: the app's serving object (`ServiceDep`), and for the
routers applications offer, whose queries they own, the store (`StoreDep`).

The Service is built in the app's lifespan and kept on `app.state`; routes ask for it here
instead of reading `request.app.state` themselves. The server's own routes use only the
Service, which offers every read they need."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from cantata.server.service import Service
from cantata.store import Store


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(_service)]


def _store(service: ServiceDep) -> Store:
    return service.store


StoreDep = Annotated[Store, Depends(_store)]
