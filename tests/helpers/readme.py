"""The README's code blocks, so that tests run what it tells a reader to run."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def code_blocks(heading: str, language: str) -> list[str]:
    """The code blocks in `language` of the README's section `heading` (its exact line)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    level = heading.split(" ", 1)[0]
    following = re.search(rf"\n#{{1,{len(level)}}} ", text[start + len(heading) + 2 :])
    section = text[start : start + len(heading) + 2 + following.start()] if following else text[start:]
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)


def commands(heading: str) -> list[str]:
    """The commands of the first `sh` block of `heading`, without their comments."""
    block = code_blocks(heading, "sh")[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
