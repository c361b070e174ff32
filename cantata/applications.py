"""What Cantata's applications offer the server besides its own API: their routers.

The server includes what it is given and knows none of them by name; `cantata serve`
(and a test building an app) passes these. An application adds its router here."""

from __future__ import annotations

from fastapi import APIRouter

from cantata.factory.board import router as task_board


def routers() -> list[APIRouter]:
    return [task_board]
