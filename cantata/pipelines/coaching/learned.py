"""The learned signal: a linear model over hashed n-grams of a sentence, beside the rules.

The phrase rules (signs.py) and the evidence score (evidence.py) catch the phrasings their
authors imagined; each batch written by someone else scored 17-47% before it was tuned on.
A logistic regression over word 1-2-grams and character 3-5-grams (inside words, so it reads
"burden", "fardeau", "unalive", "jveux" and their misspellings alike) of the tolerant() form
generalises past the phrasings, in English and French, at the price of a few false alarms;
so it may only ADD to what the rules find, never remove or lower anything (guard.py):

- a score at or above `strong` is a `high` hit on its own (weight 3), but only in a
  message that names a risk concept or holds a phrase rule's warning sign (guard.py), and
  low when that is a passive wish (grading.py); otherwise it is a weak read; on a sentence
  that itself names death, dying, suicide, self-harm or a lethal means in so many words,
  `explicit` (no higher than `strong`) is enough;
- a score at or above `weak` is a weak signal (weight 1, tier none: alone it sets no tier,
  so one ordinary remark read as middling never makes the coach ask about safety), counted
  under the warning sign the sentence names (evidence.py's concept families: a burden, a
  hedge, a farewell...), which adds to a session only beside a sign of the rules or the
  evidence that names the risk; a read whose words name no sign is noted, never counted.

Both thresholds were chosen by leave-one-split-out cross-validation (train_learned.py): the
false alarms on hard negatives, and the benign long development conversations reaching
`strong` on a turn, stay within budget (the latter per conversation). The weights are data
(learned_weights.json), written by `make safety-model`, with a hash of the labelled set
they were trained on: a test fails when the set changed and nobody retrained.

The committed signal is a Panel of two such models: the first trained on the set but the
batches kept out to measure it, the second (learned_weights_broad.json) on everything written
blind. Each reads what the other misses; the panel's read of a sentence is the higher of the
two, the second's mapped onto the first's scale by their own thresholds, so a member only
ever raises a read, never lowers it.

Inference is a dictionary lookup per feature: a sentence's features are hashed (crc32, a C
call) and cached per word, so a screen stays in tens of microseconds.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import accumulate, pairwise, repeat
from pathlib import Path
from typing import Any

from cantata.errors import CantataError

WEIGHTS_FILE = Path(__file__).with_name("learned_weights.json")
BROAD_FILE = Path(__file__).with_name("learned_weights_broad.json")  # the panel's second member
# Bumped whenever features() changes: weights trained on other features are stale.
FEATURES_VERSION = 1
BITS = 20
ENCODING = "gaps, deflate"  # how save() packs the keys and values (see gaps())
MIN_WORDS = 3  # a shorter sentence is not read: too few features for a statistical read
RULE_PREFIX = "learned."  # a learned hit's rule id: "learned." and the sign it is counted as
_MASK = (1 << BITS) - 1
_CHAR_GRAMS = (3, 4, 5)


def _hash(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8")) & _MASK


@lru_cache(maxsize=65536)
def _word_features(word: str) -> tuple[int, ...]:
    """The word itself and its character 3-5-grams, with its edges marked ("<bur", "den>")."""
    marked = f"<{word}>"
    grams = {f"c:{marked[i : i + n]}" for n in _CHAR_GRAMS for i in range(len(marked) - n + 1)}
    grams.add(f"w:{word}")
    return tuple(sorted({_hash(g) for g in grams}))


@lru_cache(maxsize=65536)
def _pair(previous: str, word: str) -> int:
    return _hash(f"b:{previous} {word}")


def features(sentence: str) -> frozenset[int]:
    """The hashed features of one sentence of the tolerant() form: its words, its word
    pairs and the character n-grams of each word. Nothing here spans a sentence end: the
    caller passes one sentence (or, in training, joins the sets of a message's sentences)."""
    found: set[int] = set()
    previous = "<s>"
    for word in sentence.split():
        if word == ",":
            previous = ","
            continue
        found.update(_word_features(word))
        found.add(_pair(previous, word))
        previous = word
    return frozenset(found)


def linear(weights: dict[int, float], bias: float, found: frozenset[int], size: int | None = None) -> float:
    """The model's logit for a feature set (each feature 1/sqrt(n), so length matters less).
    `size`: n when `found` holds only the weighed features of a larger set (Model.read)."""
    n = len(found) if size is None else size
    if not n:
        return bias
    # map() keeps the loop in C, a few times faster than a Python loop; same order, same sum.
    total = sum(map(weights.get, found, repeat(0.0)))
    return bias + total / math.sqrt(n)


def quantize(weights: dict[int, float]) -> tuple[float, dict[int, int]]:
    """One signed byte per weight and one scale for all (a weight is stored as round(w/scale)):
    the committed file stays a few hundred KB with every feature the model uses."""
    top = max((abs(w) for w in weights.values()), default=0.0)
    scale = top / 127 if top else 1.0
    quantized = {k: round(w / scale) for k, w in weights.items()}
    return scale, {k: q for k, q in quantized.items() if q}


def sigmoid(z: float) -> float:
    if z < -40:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


@dataclass(frozen=True)
class Model:
    weights: dict[int, float] = field(hash=False, compare=False)
    bias: float
    strong: float  # a score at or above this is a high hit on its own
    weak: float  # at or above this, a weak signal that accumulates
    # A score at or above this on a sentence that itself names death, dying, suicide, self-harm
    # or a lethal means in so many words (evidence.names_explicitly) is a high hit: no higher
    # than `strong`.
    explicit: float = 2.0
    data_sha256: str = ""

    def score(self, sentence: str) -> float:
        """The probability the model gives that a sentence warrants high (0 to 1)."""
        if not self.weights:
            return 0.0
        return sigmoid(linear(self.weights, self.bias, features(sentence)))

    def known(self, found: frozenset[int]) -> frozenset[int]:
        """The features of `found` the model has a weight for."""
        return frozenset(self.weights.keys() & found)

    def read(self, known: frozenset[int], size: int) -> float:
        """The probability for a feature set of `size` features of which `known` are weighed (what
        score() computes from a sentence): several turns' sets read as one, so a sentence said twice
        adds nothing (guard._context_read), without keeping their words."""
        if not self.weights or not size:
            return 0.0
        return sigmoid(linear(self.weights, self.bias, known, size))


def _knots(model: Model) -> tuple[float, float, float, float, float]:
    return (0.0, model.weak, model.explicit, model.strong, 1.0)


def onto(score: float, source: Model, target: Model) -> float:
    """A score of `source` on `target`'s scale: piecewise linear between their thresholds, so a
    read at `source`'s weak, explicit or strong is one at `target`'s."""
    src, dst = _knots(source), _knots(target)
    for i in range(4):
        if score <= src[i + 1]:
            span = src[i + 1] - src[i]
            t = (score - src[i]) / span if span > 0 else 1.0
            return dst[i] + t * (dst[i + 1] - dst[i])
    return 1.0


@dataclass(frozen=True)
class Panel(Model):
    """Several models read as one: the first's thresholds and weights (the guard asks `weights`
    whether there is a signal at all), each other member's read mapped onto its scale, the
    highest read kept. A member trained on other data may raise a read, never lower it."""

    others: tuple[Model, ...] = ()

    @classmethod
    def of(cls, first: Model, *others: Model) -> Panel:
        return cls(
            weights=first.weights,
            bias=first.bias,
            strong=first.strong,
            weak=first.weak,
            explicit=first.explicit,
            data_sha256=first.data_sha256,
            others=others,
        )

    def _best(self, logit_of: Callable[[Model], float]) -> float:
        best = sigmoid(logit_of(self))
        for other in self.others:
            best = max(best, onto(sigmoid(logit_of(other)), other, self))
        return best

    def score(self, sentence: str) -> float:
        if not self.weights:
            return 0.0
        found = features(sentence)  # hashed once for every member
        return self._best(lambda m: linear(m.weights, m.bias, found))

    def known(self, found: frozenset[int]) -> frozenset[int]:
        return frozenset(self.weights.keys() & found).union(*(o.weights.keys() & found for o in self.others))

    def read(self, known: frozenset[int], size: int) -> float:
        if not self.weights or not size:
            return 0.0
        # linear() counts a feature a member has no weight for as 0: `known` may be the union.
        return self._best(lambda m: linear(m.weights, m.bias, known, size))


# No learned signal at all: the rules alone (the "before" of the measurements).
OFF = Model(weights={}, bias=0.0, strong=2.0, weak=2.0)


def gaps(keys: Sequence[int]) -> list[int]:
    """Sorted keys as the first and the gaps between neighbours (what the file stores)."""
    return [b - a for a, b in pairwise((0, *keys))]


def _unpacked(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def read_model(path: Path) -> Model:
    """The model in a weights file written by train_learned.save()."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("features_version") != FEATURES_VERSION or raw.get("bits") != BITS:
            raise CantataError(
                f"{path}: weights are for features version {raw.get('features_version')}, "
                f"bits {raw.get('bits')}; this code reads version {FEATURES_VERSION}, bits {BITS}: "
                "run `make safety-model`"
            )
        if raw.get("encoding") != ENCODING:
            raise CantataError(
                f"{path}: weights encoded as {raw.get('encoding')!r}, not {ENCODING!r}: run `make safety-model`"
            )
        count, scale = int(raw["count"]), float(raw["scale"])
        keys = tuple(accumulate(struct.unpack(f"<{count}I", _unpacked(raw["keys"]))))
        values = struct.unpack(f"<{count}b", _unpacked(raw["values"]))
        return Model(
            weights={k: v * scale for k, v in zip(keys, values, strict=True)},
            bias=float(raw["bias"]),
            strong=float(raw["strong"]),
            weak=float(raw["weak"]),
            explicit=float(raw["explicit"]),
            data_sha256=str(raw["data_sha256"]),
        )
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        struct.error,
        binascii.Error,
        zlib.error,
    ) as error:
        raise CantataError(f"{path}: cannot read the learned signal's weights ({error})") from error


@cache
def default_model() -> Model:
    """The committed signal, read once: the panel of learned_weights.json and its broad member."""
    return Panel.of(read_model(WEIGHTS_FILE), read_model(BROAD_FILE))
