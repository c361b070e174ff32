"""An instance's measured speed and load, and the deadline a call on it gets.

A fixed timeout is wrong both ways: on a machine half as fast (or busy with another
model process) a call that is merely slow times out and the turn degrades; on a fast one
a hung instance holds the turn for the whole timeout. So each instance keeps a running
estimate of its prompt and generation speed from the calls it served, and a call's
deadline follows it, never above the agent's `timeout_s` (the user's ceiling):

- Until its first token, a call gets what it needs at that speed (its prompt, counted as
  if nothing were cached, and its max_tokens) plus what the calls already generating on
  the instance need, since a server may compute them first, all times a slack. A busy
  instance is slow for every call, not broken.
- Once tokens arrive, the call is making progress and is not failed for being slow: it
  fails only when no token comes for `stall_s` (the slack times the measured time a token
  takes with that many calls in flight, FLOOR_S at least), or at the ceiling.

Before anything is measured the ceiling alone applies. The generation speed is measured
from any reply of two tokens or more; until a prompt of MIN_PROMPT_TOKENS computed tokens
was timed, a prompt token is taken to cost as much as a generated one, far more than it
does (a prompt is computed in parallel), so the deadline is never too short.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

SLACK = 3.0  # a call may take three times what the measured speed predicts (a busier moment)
FLOOR_S = 2.0  # never less: scheduling jitter, a tokenizer pass
WEIGHT = 0.3  # of the newest measurement in the running estimate
MIN_PROMPT_TOKENS = 32  # fewer computed tokens (a cached prompt) say nothing about prompt speed


@dataclass
class Speed:
    prompt_s_per_token: float | None = None
    generation_s_per_token: float | None = None
    # The calls generating on the instance now, and the work they asked for.
    in_flight: int = 0
    in_flight_prompt_tokens: int = 0
    in_flight_max_tokens: int = 0

    def observe(
        self, *, computed_prompt_tokens: int, first_token_s: float | None, completion_tokens: int, total_s: float
    ) -> None:
        """Fold one finished call into the estimate."""
        if first_token_s is not None and computed_prompt_tokens >= MIN_PROMPT_TOKENS:
            self.prompt_s_per_token = _blend(self.prompt_s_per_token, first_token_s / computed_prompt_tokens)
        if first_token_s is not None and completion_tokens > 1:
            per_token = max(0.0, total_s - first_token_s) / (completion_tokens - 1)
            self.generation_s_per_token = _blend(self.generation_s_per_token, per_token)

    def expected_s(self, prompt_tokens: int, max_tokens: int) -> float | None:
        """What a call needs at the measured speed; None before any generation is measured."""
        generation = self.generation_s_per_token
        if generation is None:
            return None
        prompt = self.prompt_s_per_token if self.prompt_s_per_token is not None else generation
        return prompt_tokens * prompt + max_tokens * generation

    def deadline_s(self, prompt_tokens: int, max_tokens: int, ceiling_s: float) -> float:
        """Until the first token of a call about to start, with the calls in flight ahead of it."""
        expected = self.expected_s(prompt_tokens + self.in_flight_prompt_tokens, max_tokens + self.in_flight_max_tokens)
        if expected is None:
            return ceiling_s
        return min(ceiling_s, max(FLOOR_S, SLACK * expected))

    def stall_s(self) -> float | None:
        """How long a call that has begun to answer may go without a token; None before any
        generation is measured (then only the ceiling applies)."""
        if self.generation_s_per_token is None:
            return None
        return max(FLOOR_S, SLACK * self.generation_s_per_token * max(1, self.in_flight))

    @contextmanager
    def generating(self, prompt_tokens: int, max_tokens: int) -> Iterator[None]:
        """Count a call in flight while it generates, for the deadlines of those that start meanwhile."""
        self.in_flight += 1
        self.in_flight_prompt_tokens += prompt_tokens
        self.in_flight_max_tokens += max_tokens
        try:
            yield
        finally:
            self.in_flight -= 1
            self.in_flight_prompt_tokens -= prompt_tokens
            self.in_flight_max_tokens -= max_tokens


def _blend(old: float | None, new: float) -> float:
    return new if old is None else (1 - WEIGHT) * old + WEIGHT * new
