"""Who is calling. With API keys in force, every request names one (`Authorization:
Bearer cnt_...`); without any, a server on a loopback address is open for one local user,
who may see everything (it is their machine)."""

from __future__ import annotations

import ipaddress
import time
from typing import Annotated, Literal

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from cantata.config import DEFAULT_USER
from cantata.server.errors import HTTPError
from cantata.server.keys import KeyRing, Principal

OPEN = Principal(user=DEFAULT_USER, admin=True)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


RECHECK_S = 1.0  # an open server notices a key created meanwhile within this


class Auth:
    def __init__(self, keys: KeyRing, *, loopback: bool) -> None:
        self.keys = keys
        self.loopback = loopback
        self._configured = False
        self._checked_at = -RECHECK_S

    async def mode(self) -> Literal["keys", "open"]:
        if not self.loopback:
            return "keys"
        # Once keys exist they always do (a revoked key still counts), so only "no keys
        # yet" needs looking at again, and at most once a second, not on every request.
        now = time.monotonic()
        if not self._configured and now - self._checked_at >= RECHECK_S:
            self._configured = await self.keys.configured()
            self._checked_at = now
        return "keys" if self._configured else "open"

    async def principal(self, authorization: str | None) -> Principal:
        if await self.mode() == "open":
            return OPEN
        if not authorization:
            raise HTTPError(401, "an API key is required: send 'Authorization: Bearer <key>'", code="missing_api_key")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPError(401, "the Authorization header must be 'Bearer <key>'", code="invalid_api_key")
        found = await self.keys.verify(token.strip())
        if found is None:
            raise HTTPError(401, "unknown or revoked API key", code="invalid_api_key")
        return found


def _auth(request: Request) -> Auth:
    auth: Auth = request.app.state.auth
    return auth


AuthDep = Annotated[Auth, Depends(_auth)]


# The bearer scheme, for /openapi.json (each route that asks for a key lists it). It never
# answers itself (auto_error=False): `Auth.principal` reads the header whole, so that its
# 401 says what is wrong with it, in the server's one error shape.
BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="An API key from `cantata keys create`; required unless the server runs open on loopback.",
)


async def _principal(
    request: Request, auth: AuthDep, _: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]
) -> Principal:
    return await auth.principal(request.headers.get("authorization"))


async def _admin(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
    """(A 403 for any other key: routes that take `Admin` declare it, error_responses(403).)"""
    if not principal.admin:
        raise HTTPError(403, "this needs an admin key", code="admin_only")
    return principal


Caller = Annotated[Principal, Depends(_principal)]
Admin = Annotated[Principal, Depends(_admin)]
