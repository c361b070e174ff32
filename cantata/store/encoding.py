"""JSON for what the store writes: blackboard outputs, event data, agent summaries.

orjson, because every persisted event and every entry is encoded on the event loop
(so that what cannot be stored fails where it is written, not in a later commit), and
the standard library's encoder costs several microseconds a call, about ten times more:
at some thirty events a turn that was a tenth of the scheduler's own time. What orjson
does not take (an integer beyond 64 bits) falls back to the standard library, so both
write the same JSON text a reader decodes with `json.loads`.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS  # {1: ...} becomes {"1": ...}, as json.dumps writes it
# Datetimes and dataclasses are not JSON data to the standard library: an output holding
# one must fail as it did, not be stored as text that reads back as something else.
_STRICT = _OPTIONS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_standard = json.JSONEncoder(ensure_ascii=False).encode
_standard_lenient = json.JSONEncoder(ensure_ascii=False, default=str).encode


def encode(value: Any) -> str:
    """`value` as JSON text; a TypeError if it is not JSON data (a set, an object)."""
    try:
        text = orjson.dumps(value, option=_STRICT)
    except orjson.JSONEncodeError:
        return _standard(value)
    if b"null" in text:
        # orjson writes NaN and the infinities as null; the standard library writes them as
        # NaN and Infinity, which json.loads reads back. Only outputs holding a null pay this.
        return _standard(value)
    return text.decode()


def encode_lenient(value: Any) -> str:
    """`value` as JSON text, anything that is not JSON data stored as its text: for
    event data, which is diagnostic and must never fail a turn."""
    try:
        return orjson.dumps(value, default=str, option=_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return _standard_lenient(value)
