"""A reply that repeats one sentence, and where to cut it.

Small models at a low temperature fall into loops: the embedded SmolLM2 answered the
README's first example with one sentence eight times. The runtime repairs such a reply
(model_call.py) rather than regenerating it: the same prompt at the same temperature
mostly loops again (llama.cpp's sampler is seeded), a regeneration costs a whole
generation on the turn's critical path, and what the model wrote before the loop began
is what it meant to say. The repair is recorded in the agent's `quality` notes, so a
cut reply is never passed off as a clean one. While the reply streams, `RepeatGate` holds
back a sentence that may be coming back, so the stream never shows a loop the check cuts.

The rule: a sentence of at least MIN_WORDS words, compared after normalisation (case,
punctuation and spacing ignored), that comes REPEATS times or more, or twice or more
making up over half of the reply. Short sentences ("Thank you.") may recur honestly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MIN_WORDS = 3
REPEATS = 3
SHARE = 0.5

# A sentence: a run up to its end mark (. ! ? or an ellipsis) or the end of a line.
_SENTENCE = re.compile(r"[^.!?…\n]*[^.!?…\n\s][^.!?…\n]*[.!?…]*")
_NOT_WORD = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Repetition:
    sentence: str  # as first written
    count: int
    cut_at: int  # where the sentence comes back the first time: the reply is kept before it


def normalise(sentence: str) -> str:
    return _SPACE.sub(" ", _NOT_WORD.sub("", sentence.lower())).strip()


# Asked twice of each text reply (the stream's gate, then the check of the whole reply).
@lru_cache(maxsize=16)
def find_repetition(text: str) -> Repetition | None:
    """The repeated sentence that comes back first, if the reply repeats one by the rule."""
    seen: dict[str, list[re.Match[str]]] = {}
    for match in _SENTENCE.finditer(text):
        key = normalise(match.group())
        if len(key.split()) >= MIN_WORDS:
            seen.setdefault(key, []).append(match)
    total = len(normalise(text)) or 1
    found: Repetition | None = None
    for key, matches in seen.items():
        count = len(matches)
        if count >= REPEATS or (count >= 2 and count * len(key) > SHARE * total):
            again = matches[1].start()
            if found is None or again < found.cut_at:
                found = Repetition(sentence=matches[0].group().strip(), count=count, cut_at=again)
    return found


class RepeatGate:
    """What of a text reply may stream as it is written: all of it, except a sentence that
    may be coming back (its words so far begin an earlier sentence of MIN_WORDS or more),
    held until it turns out not to be one, and everything from a sentence that did come back.

    So what streamed is always the start of what the check keeps: `flush` at the end
    releases what was held, up to where `find_repetition` cuts the reply, if it does.
    """

    def __init__(self) -> None:
        self.text = ""
        self.sent = 0  # characters of `text` released
        self._start = 0  # where the sentence being written begins
        self._seen: set[str] = set()
        self._repeat_at: int | None = None  # where the first sentence that came back begins

    def feed(self, piece: str) -> str:
        self.text += piece
        hold = len(self.text)
        if self._repeat_at is None:
            for match in _SENTENCE.finditer(self.text, self._start):
                key = normalise(match.group())
                if match.end() == len(self.text):  # maybe not finished: held while it may be a repeat
                    if key and any(seen.startswith(key) for seen in self._seen):
                        hold = match.start()
                    break
                if len(key.split()) >= MIN_WORDS:
                    if key in self._seen:
                        self._repeat_at = match.start()
                        break
                    self._seen.add(key)
                self._start = match.end()
        return self._release(self._repeat_at if self._repeat_at is not None else hold)

    def flush(self) -> str:
        """The rest of what the check will keep, once the reply has ended."""
        found = find_repetition(self.text)
        return self._release(found.cut_at if found is not None else len(self.text))

    def _release(self, end: int) -> str:
        # The check keeps the reply stripped: whitespace waits for what follows it, and
        # what the reply opens with is never released.
        end = len(self.text[:end].rstrip())
        if self.sent == 0:
            self.sent = min(end, len(self.text) - len(self.text.lstrip()))
        if end <= self.sent:
            return ""
        out, self.sent = self.text[self.sent : end], end
        return out
