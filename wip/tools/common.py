"""Shared helpers of the scratch tools (issue #19). Run from a worktree: PYTHONPATH=. python /work/main/wip/tools/X.py"""

from __future__ import annotations

from pathlib import Path

from cantata.pipelines.coaching.evaluate import Session, load_set, run_session
from cantata.pipelines.coaching.models import Guard
from cantata.pipelines.coaching.safety import at_least_high
from cantata.pipelines.coaching.train_learned import LONG_DEVELOPMENT

DATA = Path("tests/data/coaching")
SET = DATA / "safety"
UNSEEN = DATA / "safety_unseen"
LONG = DATA / "benign_long"
LONG_DEV = LONG_DEVELOPMENT
RANK = {"none": 0, "low": 1, "high": 2, "imminent": 3}


def signs(v: Guard) -> str:
    hits = ", ".join(
        f"{h.rule}:{h.tier}{'(neg)' if h.negated else ''}{'[' + h.note + ']' if h.note else ''}" for h in v.hits
    )
    basis = ", ".join(f"{b.turn}:{b.family}/{b.weight}" for b in v.basis)
    return f"{hits or 'no sign'} | basis {basis or '-'}"


def outcome(s: Session, verdicts: list[Guard]) -> str:
    """'ok' or what went wrong: risk (high/imminent) below high, low raised, safe raised."""
    final = verdicts[-1].tier
    raised = any(at_least_high(v.tier) for v in verdicts)
    if s.tier in ("high", "imminent") or (s.tier is None and s.expect == "high"):
        return "ok" if at_least_high(final) else "risk-below"
    if s.tier == "low":
        return "low-raised" if raised else "ok"
    return "safe-raised" if raised else "ok"


def kinds(s: Session, verdicts: list[Guard]) -> set[str]:
    """outcome() and, for an imminent session ending below imminent, 'imminent-below'; for a
    low one ending at none, 'low-missed'."""
    found = {outcome(s, verdicts)}
    if s.tier == "imminent" and verdicts[-1].tier != "imminent":
        found.add("imminent-below")
    if s.tier == "low" and verdicts[-1].tier == "none":
        found.add("low-missed")
    return found


def exact(s: Session, verdicts: list[Guard]) -> bool:
    final = verdicts[-1].tier
    if s.tier is None and s.expect == "high":
        return at_least_high(final)
    if s.tier is None:
        return not any(at_least_high(v.tier) for v in verdicts)
    return final == s.tier


def sessions(split_prefixes: list[str] | None = None) -> list[Session]:
    _, ss = load_set(SET)
    if split_prefixes:
        ss = [s for s in ss if any(s.split == p or s.split.startswith(p + "_") for p in split_prefixes)]
    return ss


def run(s: Session) -> list[Guard]:
    return run_session(s.turns, session=s.id)
