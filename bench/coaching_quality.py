"""Coaching quality on the embedded model: scripted multi-turn conversations
(tests/data/coaching/quality/, English and French), each from a new user, every figure
issue #11 lists, per conversation and overall:

  - where the early and the merged replies came from: the model, composed from the
    blackboard, or a fixed template (target: fixed templates only at high tier);
  - distinct merged replies within the session (target: all distinct);
  - reflections to questions in the merged replies, counted by rules (miti.py; MITI 4's
    "fair" threshold is one reflection per question);
  - advice without permission and blocked actions suggested (target: 0 and 0);
  - references to earlier sessions, where none exists (target: 0);
  - median and p90 time to the early and to the merged reply.

`python bench/coaching_quality.py [name ...]` runs only the named conversations.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from cantata.bundled import load as load_bundled
from cantata.config import DEFAULT_CONFIG
from cantata.pipelines.coaching.miti import count
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.safety import at_least_high
from cantata.runtime import Cantata

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "coaching" / "quality"
SOURCES = ("model", "composed", "template")


@dataclass
class Figures:
    turns: int = 0
    early: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))
    merged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))
    template_below_high: int = 0
    distinct: int = 0
    reflections: int = 0
    questions: int = 0
    advice: int = 0
    blocked: int = 0
    earlier: int = 0
    to_early: list[float] = field(default_factory=list)
    to_merged: list[float] = field(default_factory=list)
    turn_s: list[float] = field(default_factory=list)
    # Why drafts were rejected: "coach: off topic", "synth: repeats the early reply", ...
    rejections: Counter[str] = field(default_factory=Counter)

    def add(self, other: Figures) -> None:
        self.rejections.update(other.rejections)
        self.turns += other.turns
        for key in SOURCES:
            self.early[key] += other.early[key]
            self.merged[key] += other.merged[key]
        for name in ("template_below_high", "distinct", "reflections", "questions", "advice", "blocked", "earlier"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.to_early += other.to_early
        self.to_merged += other.to_merged
        self.turn_s += other.turn_s


def source_kind(source: str | None) -> str:
    return {"generated": "model", "composed": "composed"}.get(source or "", "template")


def p90(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


async def conversation(app: Cantata, name: str, messages: list[str]) -> tuple[Figures, list[tuple[str, str, str]]]:
    pipeline = load_bundled("coaching")
    figures = Figures()
    merged: list[str] = []
    shown: list[tuple[str, str, str]] = []
    session: str | None = None
    for message in messages:
        start = time.perf_counter()
        result = await app.run_turn(pipeline, message, user=f"quality-{name}", session_id=session)
        figures.turn_s.append(time.perf_counter() - start)
        session = result.session
        out = {a.name: a.output for a in result.agents}
        tier = (out.get("stability") or {}).get("tier") or "none"
        figures.turns += 1
        early_kind = source_kind((out.get("coach") or {}).get("source"))
        merged_kind = source_kind((out.get("synth") or {}).get("source"))
        for agent in ("coach", "synth"):
            for reason in (out.get(agent) or {}).get("rejected") or []:
                figures.rejections[f"{agent}: {reason.split(':')[0]}"] += 1
        figures.early[early_kind] += 1
        figures.merged[merged_kind] += 1
        if not at_least_high(tier):
            figures.template_below_high += (early_kind == "template") + (merged_kind == "template")
        if result.early is not None:
            figures.to_early.append(result.early.at_s)
        if result.final is not None:
            figures.to_merged.append(result.final.at_s)
            text = result.final.text
            merged.append(text)
            counts = count(text, earlier_sessions=False)  # each conversation is a new user's first session
            figures.reflections += counts.reflections
            figures.questions += counts.questions
            figures.advice += counts.advice_without_permission
            figures.earlier += counts.earlier_session_references
            figures.blocked += len(detect_blocked(text, (out.get("stability") or {}).get("blocked") or []))
        shown.append((message, result.early.text if result.early else "", result.final.text if result.final else ""))
    figures.distinct = len(set(merged))
    return figures, shown


def row(name: str, f: Figures) -> str:
    def shares(d: dict[str, int]) -> str:
        return "/".join(f"{100 * d[k] / max(f.turns, 1):.0f}" for k in SOURCES)

    ratio = f.reflections / f.questions if f.questions else float("inf")
    return (
        f"  {name:22s} {f.turns:2d}  {shares(f.early):>11s}  {shares(f.merged):>11s}  {f.distinct:2d}/{f.turns:<2d}"
        f"  {f.reflections:2d}:{f.questions:<2d} {ratio:4.1f}  {f.advice:2d} {f.blocked:2d} {f.earlier:2d}"
        f"  {statistics.median(f.to_early or [float('nan')]):5.1f} {p90(f.to_early):5.1f}"
        f"  {statistics.median(f.to_merged or [float('nan')]):5.1f} {p90(f.to_merged):5.1f}"
    )


async def run(names: list[str]) -> None:
    files = sorted(DATA.glob("*.yaml"))
    if names:
        files = [f for f in files if f.stem in names]
    total = Figures()
    print("coaching quality on the embedded model (each conversation a new user)")
    print(f"  load before: {os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)")
    print(
        "  conversation           turns early m/c/t%  merged m/c/t% distinct refl:q ratio adv blk old"
        "  early med/p90 s  merged med/p90 s"
    )
    transcripts: list[tuple[str, list[tuple[str, str, str]]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = Cantata(DEFAULT_CONFIG, home=Path(tmp))
        try:
            # Load the model first: its seconds of loading are not a turn's.
            await app.run_turn(load_bundled("coaching"), "hello", user="warm-up")
            for path in files:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
                figures, shown = await conversation(app, path.stem, list(data["turns"]))
                print(row(path.stem, figures), flush=True)
                total.add(figures)
                transcripts.append((path.stem, shown))
        finally:
            await app.close()
    print(row("overall", total))
    print(
        f"  targets: templates below high tier 0 (measured {total.template_below_high}); distinct all; "
        f"reflections per question >= 1; advice 0, blocked 0, earlier sessions 0"
    )
    print(
        f"  full turn: median {statistics.median(total.turn_s):.1f} s, p90 {p90(total.turn_s):.1f} s (target median < 15 s);"
        f" load after: {os.getloadavg()[0]:.2f}"
    )
    print("  drafts rejected, by reason: " + "; ".join(f"{r} {n}" for r, n in total.rejections.most_common()))
    if os.environ.get("CANTATA_BENCH_TRANSCRIPTS"):
        for name, shown in transcripts:
            print(f"\n  == {name}")
            for message, early, final in shown:
                print(f"  > {message}\n    early:  {early}\n    merged: {final}")


def main(names: list[str] | None = None) -> None:
    asyncio.run(run(names or []))


if __name__ == "__main__":
    main(sys.argv[1:])
