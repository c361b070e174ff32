"""Output models of the example pipeline."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Screen(BaseModel):
    flagged: bool
    reason: str | None = None


class Reading(BaseModel):
    feeling: Literal["hopeful", "frustrated", "anxious", "sad", "neutral"]
    intensity: int = Field(ge=1, le=5, description="1 = mild, 5 = overwhelming")
    reply: str = Field(max_length=300, description="One sentence reflecting the feeling back.")
