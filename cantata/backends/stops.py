"""Stop sequences applied to a reply as it streams, so a backend can say which one ended it.

llama.cpp and OpenAI-compatible servers stop at a stop sequence but report only
finish_reason "stop", the same as for the end of a reply; the runtime needs to know when
a reply was cut because it echoed the prompt (model_call.py). So the backends scan the
text themselves: text that might be the start of a stop sequence is held back until the
next piece shows whether it is, and nothing from a stop sequence on is ever emitted.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=64)  # a scanner per model call, and a pipeline's calls share a few sets of stops
def _prepared(stops: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str], int]:
    """The stops (empty ones dropped), their first characters, and the longest end of a
    piece that may begin one. The first characters serve the common case, a piece whose end
    holds none of them: nothing to hold back, found without trying every end of the text
    against every stop."""
    kept = tuple(s for s in stops if s)
    return kept, frozenset(s[0] for s in kept), max((len(s) - 1 for s in kept), default=0)


class StopScanner:
    """Feed the reply's pieces in order; emit what `feed` returns, then what `flush` returns."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops, self._firsts, self._window = _prepared(stops)
        self.matched: str | None = None  # the stop sequence found, once one is
        self._held = ""

    def feed(self, piece: str) -> str:
        """The text that is certainly part of the reply so far; "" once a stop was found."""
        if self.matched is not None or not self.stops:
            return "" if self.matched is not None else piece
        text = self._held + piece
        hits = [(at, stop) for stop in self.stops if (at := text.find(stop)) != -1]
        if hits:
            at, self.matched = min(hits)
            self._held = ""
            return text[:at]
        keep = self._possible_start(text)
        self._held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What was held back, once the reply has ended without a stop sequence."""
        held, self._held = self._held, ""
        return held

    def _possible_start(self, text: str) -> int:
        """The length of the longest end of `text` that a stop sequence begins with."""
        if not self._window or self._firsts.isdisjoint(text[-self._window :]):
            return 0
        longest = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(text)), longest, -1):
                if stop.startswith(text[-size:]):
                    longest = size
                    break
        return longest
