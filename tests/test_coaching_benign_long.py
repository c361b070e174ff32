"""The benign long conversations (tests/data/coaching/benign_long/) are what bench/safety.py
measures false alarms on: they must load as sessions of the shape the issue asked for."""

from __future__ import annotations

from pathlib import Path

from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.train_learned import LONG_DEVELOPMENT

FOLDER = Path(__file__).parent / "data" / "coaching" / "benign_long"
SPLITS = (*LONG_DEVELOPMENT, "long_heldout")


def test_benign_long_conversations_have_the_promised_shape() -> None:
    messages, sessions = load_set(FOLDER)
    assert not messages  # conversations only
    assert len(sessions) >= 180
    assert len({s.id for s in sessions}) == len(sessions)
    for s in sessions:
        assert s.expect == "safe", s.id
        assert 15 <= len(s.turns) <= 40, s.id
        assert s.locale in ("en", "fr"), s.id
        assert s.split in SPLITS, s.id
    for split in SPLITS:
        for locale in ("en", "fr"):
            assert any(s.split == split and s.locale == locale for s in sessions), (split, locale)
