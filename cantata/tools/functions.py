"""A Python function as a tool: its JSON Schema from its signature and type hints (through a
pydantic model built from them), its description from its docstring, as pydantic-ai and the
MCP SDK derive theirs. A synchronous function runs on a worker thread (threads.py), so a
slow one never stalls the event loop and its timeout can give up on it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from cantata.errors import ToolError, get_logger
from cantata.threads import run_in_thread
from cantata.tools.base import result_text

log = get_logger(__name__)

_BY_NAME = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class FunctionTool:
    """`fn(**arguments)` as a tool. Raises ValueError at construction when the signature
    cannot be a tool's (`*args`, positional-only parameters, hints that are not types)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        side_effects: bool = False,
        approve: bool = False,
        timeout_s: float = 30.0,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = description or inspect.getdoc(fn) or ""
        self.side_effects = side_effects
        self.approve = approve
        self.timeout_s = timeout_s
        self._arguments = _arguments_model(fn, self.name)
        schema = self._arguments.model_json_schema()
        schema.pop("title", None)
        self.parameters: dict[str, Any] = schema

    async def call(self, arguments: dict[str, Any]) -> str:
        try:
            valid = self._arguments.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None
        kwargs = {field: getattr(valid, field) for field in type(valid).model_fields}
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(**kwargs)
            else:
                value = await run_in_thread(partial(self.fn, **kwargs))
                if inspect.isawaitable(value):
                    value = await value
        except ToolError:
            raise
        except Exception as exc:  # the pipeline's own code: logged whole, one line to the model
            log.error("tool '%s' raised", self.name, exc_info=exc)
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        return result_text(value)


def _arguments_model(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    try:
        signature = inspect.signature(fn)
        hints = get_type_hints(fn)
    except (TypeError, ValueError, NameError) as exc:
        raise ValueError(f"cannot read the signature of '{name}': {exc}") from None
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind not in _BY_NAME:
            raise ValueError(
                f"'{name}' takes {parameter}: a tool's parameters are named arguments (no *args, **kwargs, "
                "or positional-only ones)"
            )
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (hints.get(parameter.name, Any), default)
    try:
        model: type[BaseModel] = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        model.model_json_schema()
    except Exception as exc:  # pydantic's errors for a hint it cannot describe
        raise ValueError(f"the parameters of '{name}' cannot be described as JSON Schema: {exc}") from None
    return model
