"""What the store writes as JSON reads back as the standard library would have written it."""

from __future__ import annotations

import dataclasses
import datetime
import json

import pytest

from cantata.store.encoding import encode, encode_lenient


@pytest.mark.parametrize(
    "value",
    [
        {"text": "déjà vu, ça va — 日本"},
        {"nested": [1, 2.5, None, True, {"k": "v"}]},
        {"big": 2**70},  # beyond orjson's 64 bits: the standard library writes it
        [],
    ],
)
def test_encoded_values_read_back_unchanged(value: object) -> None:
    assert json.loads(encode(value)) == value
    assert json.loads(encode_lenient(value)) == value


def test_non_string_keys_become_strings_as_json_dumps_writes_them() -> None:
    assert json.loads(encode({1: "a", None: "b"})) == json.loads(json.dumps({1: "a", None: "b"}))


def test_what_is_not_json_data_fails_unless_lenient() -> None:
    with pytest.raises(TypeError):
        encode({"tags": {"a"}})
    assert json.loads(encode_lenient({"tags": {"a"}})) == {"tags": "{'a'}"}


def test_datetimes_and_dataclasses_are_not_json_data_as_before() -> None:
    # orjson would write them as text and objects, which read back as something else.
    @dataclasses.dataclass
    class Point:
        x: int

    for value in ({"when": datetime.datetime(2026, 1, 1)}, {"at": Point(1)}):
        with pytest.raises(TypeError):
            encode(value)
