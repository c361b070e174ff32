"""The README's code blocks, so that tests run what it tells a reader to run."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _heading_level(line: str) -> int:
    hashes = len(line) - len(line.lstrip("#"))
    return hashes if hashes and line[hashes : hashes + 1] == " " else 0


def code_blocks(heading: str, language: str) -> list[str]:
    """The code blocks in `language` of the README's section `heading` (its exact line),
    up to the next heading of its level or above (a `#` line inside a block is code)."""
    level = _heading_level(heading)
    blocks: list[str] = []
    inside = False
    block: list[str] | None = None  # the lines of the open block
    opened = ""  # its language
    for line in README.read_text(encoding="utf-8").splitlines(keepends=True):
        if block is not None:
            if line.startswith("```"):
                if inside and opened == language:
                    blocks.append("".join(block))
                block = None
            else:
                block.append(line)
        elif line.startswith("```"):
            block, opened = [], line[3:].strip()
        elif line.rstrip("\n") == heading:
            inside = True
        elif inside and 0 < _heading_level(line) <= level:
            break
    return blocks


def commands(heading: str) -> list[str]:
    """The commands of the first `sh` block of `heading`, without their comments."""
    block = code_blocks(heading, "sh")[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
