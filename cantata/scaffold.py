"""`cantata new NAME`: a pipeline folder to start from, that loads and runs as written.

The folder holds one of each part a pipeline has: its YAML, a prompt file, an output
model and a function. The files are text with comments that teach (the factory builds its
pipelines through the spec models instead, having no reader to teach); before the folder
appears, it is loaded as `cantata validate` would, so a scaffold that does not load is
never written. It is written in a hidden folder beside the target and renamed into place:
a failure leaves nothing behind.
"""

from __future__ import annotations

import re
import secrets
import shutil
from pathlib import Path

from cantata.errors import UserError
from cantata.loader import Pipeline, load_pipeline

# A folder name that is also a pipeline name, on every system, and not hidden.
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

PIPELINE_YAML = """\
# Written by `cantata new {name}`. Run it: cantata run {name}/pipeline.yaml -m "I keep skipping my runs."
name: {name}
description: A quick reply at once, then a considered one that reads the mood and the facts.
briefing: You help one person reflect on their habits. Be brief, warm and concrete.  # every agent sees it first
budget: 1024                      # tokens for the briefing: the conversation so far and the new message
agents:
  - name: facts
    function: functions.facts     # Python instead of a model: facts() in functions.py, beside this file

  - name: quick
    prompt: Reply to the new message in one short sentence. Ask one open question.
    deliver: early                # sent at once, while the others work
    max_tokens: 60

  - name: mood
    prompt: prompts/mood.md       # a prompt file, beside this one
    output: models.Mood           # a pydantic model in models.py (or an inline JSON Schema)
    retries: 1                    # once more if the reply does not fit the model
    max_tokens: 80

  - name: reply
    prompt: Write a short reply, two or three sentences, that fits the person's mood.
    reads: [facts, mood]          # starts once both have written; their outputs are in its prompt
    required: [mood]              # skipped if mood failed
    deliver: final                # the merged reply
    max_tokens: 120
"""

MOOD_PROMPT = """\
Name the feeling in the new message, and say in a few words what it is about.
"""

MODELS_PY = '''\
"""Output models of the {name} pipeline: an agent's `output:` names one, and its reply is
validated against it (and, on most backends, constrained to it while it is written)."""

from typing import Literal

from pydantic import BaseModel, Field


class Mood(BaseModel):
    feeling: Literal["hopeful", "frustrated", "anxious", "sad", "neutral"]
    about: str = Field(max_length=120, description="What the feeling is about, in a few words.")


class Facts(BaseModel):
    words: int
    asks: bool = Field(description="Whether the message asks a question.")
'''

FUNCTIONS_PY = '''\
"""Function agents of the {name} pipeline: code, not a model, for what code can say for sure."""

from cantata import FunctionContext

from .models import Facts  # modules beside pipeline.yaml import each other relatively


def facts(ctx: FunctionContext) -> Facts:
    return Facts(words=len(ctx.message.split()), asks=ctx.message.rstrip().endswith("?"))
'''


def files(name: str) -> dict[str, str]:
    """The scaffold of pipeline `name`: {path in its folder: text}."""
    return {
        "pipeline.yaml": PIPELINE_YAML.format(name=name),
        "prompts/mood.md": MOOD_PROMPT,
        "models.py": MODELS_PY.format(name=name),
        "functions.py": FUNCTIONS_PY.format(name=name),
    }


def scaffold(name: str, parent: Path) -> tuple[Path, Pipeline]:
    """Write the folder `parent/name` and return it with its pipeline, loaded. A bad name or
    an existing folder is a UserError, and nothing is written."""
    if not NAME.fullmatch(name):
        raise UserError(
            f"'{name}' is not a pipeline name for cantata new: a letter, then up to 63 letters, digits, _ or -"
        )
    folder = parent / name
    if folder.exists() or folder.is_symlink():
        raise UserError(f"{folder} already exists: cantata new writes a new folder only")
    draft = parent / f".{name}.{secrets.token_hex(4)}.new"
    try:
        draft.mkdir()  # mkdtemp's would be private (0700); this one gets the umask's mode
    except OSError as exc:
        raise UserError(f"cannot write in {parent}: {exc.strerror}") from exc
    try:
        for path, text in files(name).items():
            (draft / path).parent.mkdir(parents=True, exist_ok=True)
            (draft / path).write_text(text, encoding="utf-8")
        load_pipeline(draft / "pipeline.yaml")
        draft.rename(folder)
    except OSError as exc:
        raise UserError(f"cannot write {folder}: {exc.strerror}") from exc
    finally:
        shutil.rmtree(draft, ignore_errors=True)
    return folder, load_pipeline(folder / "pipeline.yaml")
