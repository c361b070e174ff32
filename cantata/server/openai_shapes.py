"""A TurnResult in OpenAI's shapes: the completion, its usage, and the `cantata` field."""

from __future__ import annotations

import time

from cantata.server.protocol import (
    AgentSummary,
    AssistantMessage,
    CantataTurnInfo,
    ChatCompletion,
    Choice,
    Usage,
)
from cantata.turn import TurnResult


def reply(result: TurnResult) -> str:
    """The merged reply; the early one when the final agent failed."""
    if result.final is not None:
        return result.final.text
    return result.early.text if result.early is not None else ""


def usage(result: TurnResult) -> Usage:
    prompt = sum(a.prompt_tokens for a in result.agents)
    completion = sum(a.completion_tokens for a in result.agents)
    cached = sum(a.cached_tokens for a in result.agents)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details={"cached_tokens": cached},
    )


def turn_info(result: TurnResult) -> CantataTurnInfo:
    return CantataTurnInfo(
        turn_id=result.turn_id,
        turn=result.turn,
        session=result.session,
        status=result.status,
        early=result.early.text if result.early else None,
        merged=result.final.text if result.final else None,
        early_agent=result.early.agent if result.early else None,
        final_agent=result.final.agent if result.final else None,
        agents=[
            AgentSummary(
                name=a.name,
                status=a.status,
                instance=a.instance,
                started_s=a.started_s,
                finished_s=a.finished_s,
                attempts=a.attempts,
                error=a.error,
            )
            for a in result.agents
        ],
        quality=result.quality,
        approvals=result.approvals,
    )


def completion(result: TurnResult, *, model: str) -> ChatCompletion:
    return ChatCompletion(
        id=f"chatcmpl-{result.turn_id}",
        created=int(time.time()),
        model=model,
        choices=[Choice(message=AssistantMessage(content=reply(result)))],
        usage=usage(result),
        cantata=turn_info(result),
    )
