"""An instance's measured speed, and the deadline a call on it gets.

A fixed timeout is wrong both ways: on a machine half as fast (or busy with another
model process) a call that is merely slow times out and the turn degrades; on a fast one
a hung instance holds the turn for the whole timeout. So each instance keeps a running
estimate of its prompt and generation speed from the calls it served, and a call's
deadline is what this call needs at that speed (its prompt, counted as if nothing were
cached, and its max_tokens), times a slack, never above the agent's `timeout_s` (the
user's ceiling). Before the first measurement the ceiling alone applies.
"""

from __future__ import annotations

from dataclasses import dataclass

SLACK = 3.0  # a call may take three times what the measured speed predicts (a busier moment)
FLOOR_S = 2.0  # never less: scheduling jitter, a tokenizer pass
WEIGHT = 0.3  # of the newest measurement in the running estimate
MIN_PROMPT_TOKENS = 32  # fewer computed tokens (a cached prompt) say nothing about prompt speed


@dataclass
class Speed:
    prompt_s_per_token: float | None = None
    generation_s_per_token: float | None = None

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
        """What a call needs at the measured speed; None before both speeds are measured."""
        if self.prompt_s_per_token is None or self.generation_s_per_token is None:
            return None
        return prompt_tokens * self.prompt_s_per_token + max_tokens * self.generation_s_per_token

    def deadline_s(self, prompt_tokens: int, max_tokens: int, ceiling_s: float) -> float:
        expected = self.expected_s(prompt_tokens, max_tokens)
        if expected is None:
            return ceiling_s
        return min(ceiling_s, max(FLOOR_S, SLACK * expected))


def _blend(old: float | None, new: float) -> float:
    return new if old is None else (1 - WEIGHT) * old + WEIGHT * new
