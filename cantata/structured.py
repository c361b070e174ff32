"""Structured output: the schema sent as a decoding constraint, and validation of the reply.

Grammars constrain the shape of JSON but not everything a schema says (llama.cpp's did
not enforce a number's maximum), so every reply is validated here, whatever the backend
promised. One repair attempt then carries the validation error back to the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from cantata.errors import OutputInvalid, SpecError


@dataclass(frozen=True)
class OutputContract:
    """What an agent must produce: a JSON Schema, checked by pydantic or jsonschema."""

    name: str
    schema: dict[str, Any]
    model: type[BaseModel] | None = None

    def validate_text(self, text: str) -> dict[str, Any]:
        """Parse and validate a reply; raise OutputInvalid with a message a model can act on."""
        data = parse_json_reply(text)
        return self.validate_data(data)

    def validate_data(self, data: Any) -> dict[str, Any]:
        if self.model is not None:
            try:
                return self.model.model_validate(data).model_dump(mode="json")
            except ValidationError as exc:
                raise OutputInvalid(_pydantic_summary(exc)) from None
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(self.schema).iter_errors(data))
        if error is not None:
            path = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise OutputInvalid(f"at {path}: {error.message}")
        if not isinstance(data, dict):
            raise OutputInvalid("expected a JSON object")
        return data


def contract_from_model(model: type[BaseModel]) -> OutputContract:
    return OutputContract(name=model.__name__, schema=model.model_json_schema(), model=model)


def contract_from_schema(schema: dict[str, Any], *, name: str, where: str) -> OutputContract:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise SpecError(f"{where}: invalid JSON Schema: {exc.message}") from None
    if schema.get("type") != "object":
        raise SpecError(f'{where}: an output schema must describe an object ("type": "object")')
    try:
        outline(schema, schema)  # follows every $ref a prompt will need
    except LookupError as exc:
        raise SpecError(f"{where}: invalid JSON Schema: {exc.args[0]}") from None
    return OutputContract(name=name, schema=schema)


# A length bound written as a pattern, e.g. ^[^"]{0,40}$ (grammars enforce it; say it too).
_PATTERN_LENGTH = re.compile(r"\{\d*,(\d+)\}\$$")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """The JSON object in a reply, tolerating a code fence or words around it."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        try:
            return json.loads(stripped[start : end + 1])
        except ValueError:
            pass
    excerpt = stripped[:80].replace("\n", " ")
    raise OutputInvalid(f"the reply is not a JSON object (it starts with {excerpt!r})")


def repair_instruction(error: OutputInvalid) -> str:
    return (
        f"Your previous reply was rejected: {error.message}. "
        "Reply again with only the corrected JSON object, matching the schema exactly."
    )


def format_instruction(contract: OutputContract | None) -> str:
    """What the model is told about the output's shape.

    An outline, not the JSON Schema: the schema itself goes to the backend as the decoding
    constraint, and in the prompt its patterns and nesting cost hundreds of tokens per
    agent (which small models then copy into their answers).
    """
    if contract is None:
        return "Reply in plain text."
    notes = _notes(contract.schema, contract.schema)
    text = "Reply with only a JSON object of this shape:\n" + outline(contract.schema, contract.schema)
    return text + ("\nWhere:\n" + "\n".join(notes) if notes else "")


def outline(schema: dict[str, Any], root: dict[str, Any]) -> str:
    """A compact, JSON-like picture of a schema: {"mood": "good"|"bad", "score": integer 1-5}."""
    schema = resolve_ref(schema, root)
    if "enum" in schema:
        values = schema["enum"]
        if all(isinstance(v, int) for v in values) and values == list(range(values[0], values[0] + len(values))):
            return f"{values[0]}-{values[-1]}"
        return "|".join(json.dumps(v, ensure_ascii=False) for v in values)
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(outline(option, root) for option in schema[key])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        fields = (f'"{name}": {outline(sub, root)}' for name, sub in schema.get("properties", {}).items())
        return "{" + ", ".join(fields) + "}"
    if kind == "array":
        return "[" + outline(schema.get("items", {}), root) + ", ...]"
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        return f"{kind} {low}-{high}" if low is not None and high is not None else str(kind)
    if kind == "string":
        longest = schema.get("maxLength")
        bounded = _PATTERN_LENGTH.search(schema.get("pattern", ""))
        if longest is None and bounded:
            longest = int(bounded.group(1))
        return f"text (at most {longest} characters)" if longest is not None else "text"
    return str(kind or "value")


def _notes(schema: dict[str, Any], root: dict[str, Any], prefix: str = "") -> list[str]:
    """The descriptions of the fields, one line each: they say what a value means."""
    schema = resolve_ref(schema, root)
    notes = []
    for name, sub in schema.get("properties", {}).items():
        sub = resolve_ref(sub, root)
        if sub.get("description"):
            notes.append(f"- {prefix}{name}: {sub['description']}")
        notes.extend(_notes(sub, root, prefix=f"{prefix}{name}."))
        if sub.get("type") == "array" and isinstance(sub.get("items"), dict):
            notes.extend(_notes(sub["items"], root, prefix=f"{prefix}{name}[]."))
    return notes


def resolve_ref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The schema a `$ref` points to (following chains), or `schema` itself.

    Only local references ("#/$defs/Mood"), which is what pydantic writes and what the
    backends accept; an unresolvable one raises LookupError."""
    seen: set[str] = set()
    while "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#") or ref in seen:
            raise LookupError(f"cannot resolve $ref {ref!r}: only local references without cycles are supported")
        seen.add(ref)
        pointer = ref[1:].lstrip("/")
        node: Any = root
        for escaped in pointer.split("/") if pointer else []:
            part = escaped.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(part)] if isinstance(node, list) else node[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise LookupError(f"cannot resolve $ref {ref!r}: no '{part}' there") from None
        if not isinstance(node, dict):
            raise LookupError(f"cannot resolve $ref {ref!r}: it does not point to a schema")
        schema = node
    return schema


def reply_text(output: Any) -> str:
    """The user-facing text of an output: itself if text, else its `reply` field."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        reply = output.get("reply")
        if isinstance(reply, str):
            return reply
    return json.dumps(output, ensure_ascii=False)


def _pydantic_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = "/".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"at {loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
