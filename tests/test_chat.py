"""The terminal chat, driven through stdin like a person (or a script) would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.pipelines import WriteFile, canned_config, scripted_config

PIPELINE = """
name: talk
agents:
  - name: note
    prompt: Note what matters.
    memory: [note]
  - name: quick
    prompt: Answer at once.
    deliver: early
  - name: merged
    prompt: Merge.
    reads: [note, quick]
    deliver: final
"""


def chat(write: WriteFile, stdin: bytes, *args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    config = config or scripted_config(write, fake={"latency_s": 0.01})
    done = subprocess.run(
        [sys.executable, "-m", "cantata", "chat", str(write("talk.yaml", PIPELINE)), "--config", str(config), *args],
        input=stdin,
        capture_output=True,
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_early_reply_then_merged_reply_then_memory_and_forget(write: WriteFile, home: Path) -> None:
    done = chat(write, b"I keep scrolling\nstill scrolling\n/memory\n/forget\n/memory\n/quit\n", "--user", "ana")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    quick = [i for i, line in enumerate(lines) if line.startswith("quick: ")]
    merged = [i for i, line in enumerate(lines) if line.startswith("merged: ")]
    assert len(quick) == 2 and len(merged) == 2
    assert quick[0] < merged[0] < quick[1] < merged[1]  # early first, each turn
    memory_at = lines.index("Cantata keeps 1 session(s) for ana.")
    assert lines[memory_at + 1].startswith("note (turn 2):")
    assert "(deleted everything Cantata kept about ana: 1 sessions)" in lines
    assert "Cantata keeps 0 session(s) for ana." in lines and "No memory from earlier turns yet." in lines


def test_new_starts_a_session_and_bad_bytes_do_not_crash(write: WriteFile) -> None:
    done = chat(write, b"caf\xe9 \xff\n/new\nhello\n/nonsense\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("merged: ") == 2
    assert "Commands: /new" in done.stdout.splitlines()[-1]


def test_unknown_session_is_refused(write: WriteFile) -> None:
    done = chat(write, b"hi\n", "--session", "nope")
    assert done.returncode == 2 and "no session 'nope'" in done.stderr


def test_a_turn_whose_reply_was_repaired_says_so(write: WriteFile) -> None:
    config = canned_config(write, {"merged": "You keep reaching for the phone at night. " * 3})
    done = chat(write, b"I keep scrolling\n/quit\n", config=config)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "merged: You keep reaching for the phone at night." in lines
    assert "(quality: Cantata's checks repaired the replies of merged)" in lines
