"""An experiment, nothing saved: the n-gram signal trained on the data the committed one leaves out
(the MEASURED_ONLY blind splits, every benign long development split) and on border set A, each read
raw (no gate, no rules) at the committed thresholds: unseen messages (counts only), benign long
held-out conversations reaching a strong read, border set B at strong. Training one model takes
seconds; `make safety-model`'s cross-validation is what takes long.
Usage (from the g19 worktree): retrain_more.py"""

from __future__ import annotations

from pathlib import Path

from cantata.pipelines.coaching import train_learned as T
from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.learned import default_model, features

BORDER = Path("tests/data/coaching/benign_probes")
model = default_model()


def border(name: str) -> list[str]:
    lines = (BORDER / f"border_{name}.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[1] for line in lines if line.strip() and not line.startswith("#")]


def example(text: str) -> T.Example:
    found: set[int] = set()
    sentences = T.sentences_of(text)
    for sentence in sentences:
        found |= features(sentence)
    return T.Example("border", "x", text, 1, tuple(sorted(found)), sentences, True, "", True, ())


committed = T.examples()
T.MEASURED_ONLY = frozenset()
T.LONG_SPLITS = T.BROAD_LONG_SPLITS
more = T.examples()
with_a = more + [example(t) for name in ("en_a", "fr_a") for t in border(name)]
unseen = load_set(Path("tests/data/coaching/safety_unseen"))[0]
held = [c for c in load_set(Path("tests/data/coaching/benign_long"))[1] if c.split == "long_heldout"]
b_texts = border("en_b") + border("fr_b")
for name, data in (("committed data", committed), ("all blind dev + long dev", more), ("all + border A", with_a)):
    weights, bias = T.train(data)

    def score(text: str, weights: dict[int, float] = weights, bias: float = bias) -> float:
        return T.best_score(weights, bias, T.sentences_of(text))

    crisis = sum(score(m.text) >= model.strong for m in unseen if m.expect == "high")
    safe = sum(score(m.text) >= model.strong for m in unseen if m.expect == "safe")
    convs = sum(any(score(t) >= model.strong for t in c.turns) for c in held)
    b_read = sum(score(t) >= model.strong for t in b_texts)
    print(
        f"{name:26} ({len(data)} examples): unseen crisis at strong {crisis}, unseen safe at strong {safe},"
        f" benign held-out conversations with a strong read {convs}/{len(held)}, border B at strong {b_read}/{len(b_texts)}"
    )
