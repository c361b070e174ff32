"""Function agents of the example pipeline: code, not a model, so a message cannot talk them round."""

from __future__ import annotations

import re

from cantata import FunctionContext
from cantata.pipelines.example.models import Screen

_URGENT = re.compile(r"\b(kill myself|suicide|hurt myself|overdose)\b", re.IGNORECASE)


def screen(ctx: FunctionContext) -> Screen:
    match = _URGENT.search(ctx.message)
    return Screen(flagged=bool(match), reason=f"mentions '{match.group(0)}'" if match else None)
