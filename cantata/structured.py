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
        raise SpecError(f"{where}: an output schema must describe an object (\"type\": \"object\")")
    return OutputContract(name=name, schema=schema)


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
    if contract is None:
        return "Reply in plain text."
    return "Reply with only a JSON object matching this JSON Schema:\n" + json.dumps(
        contract.schema, separators=(",", ":"), sort_keys=True
    )


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
