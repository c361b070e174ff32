"""What Cantata's applications offer the server besides its own API: their routers, and
what removes the files they keep for a user when that user is forgotten.

The server includes what it is given and knows none of them by name; `cantata serve`
(and a test building an app) passes these. An application adds its own here."""

from __future__ import annotations

import importlib.util

from fastapi import APIRouter

from cantata.factory.board import router as task_board
from cantata.factory.registry import forget_files as factory_files
from cantata.runtime import Forgetter


def routers() -> list[APIRouter]:
    offered = [task_board]
    if importlib.util.find_spec("mcp") is not None:  # the `mcp` extra: /mcp
        from cantata.mcp_http import router as mcp

        offered.append(mcp)
    return offered


def forgetters() -> list[Forgetter]:
    return [factory_files]
