"""Validation and the one repair attempt: what grammars let through must still be caught."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from pydantic import BaseModel, Field

from cantata.backends.base import Backend, BackendInfo, Chunk, CompletionRequest, Message, Usage
from cantata.config import InstanceConfig
from cantata.context import CheckContext
from cantata.errors import BackendUnavailable, OutputInvalid, OutputTruncated, Rejected, SpecError
from cantata.model_call import ModelCall
from cantata.pool import Instance
from cantata.spec import AgentSpec
from cantata.structured import contract_from_model, contract_from_schema, parse_json_reply
from cantata.turn import AgentResult
from tests.helpers.pipelines import WriteFile


class Mood(BaseModel):
    score: int = Field(ge=1, le=5)
    reply: str


SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reply": {"type": "string"}},
    "required": ["score", "reply"],
}


@pytest.mark.parametrize("contract", [contract_from_model(Mood), contract_from_schema(SCHEMA, name="m", where="x")])
def test_number_bounds_are_enforced_by_validation(contract: object) -> None:
    from cantata.structured import OutputContract

    assert isinstance(contract, OutputContract)
    assert contract.validate_text('{"score": 3, "reply": "ok"}')["score"] == 3
    with pytest.raises(OutputInvalid, match="score"):
        contract.validate_text('{"score": 9, "reply": "too high"}')
    with pytest.raises(OutputInvalid, match="reply"):
        contract.validate_text('{"score": 2}')


def test_json_is_found_in_fences_and_chatter() -> None:
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Sure! {"a": 1} Hope that helps.') == {"a": 1}
    with pytest.raises(OutputInvalid, match="not a JSON object"):
        parse_json_reply("no json here")


class Replies(Backend):
    """Answers each call with the next canned text, and records what it was asked."""

    def __init__(self, *texts: str) -> None:
        self.name = "canned"
        self.texts = list(texts)
        self.requests: list[CompletionRequest] = []

    def info(self) -> BackendInfo:
        return BackendInfo(backend="canned", model="canned")

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
        self.requests.append(request)
        yield Chunk(text=self.texts.pop(0))
        yield Chunk(usage=Usage(prompt_tokens=10, completion_tokens=3))


def _call(backend: Replies, retries: int = 0) -> tuple[ModelCall, AgentResult]:
    agent = AgentSpec(name="mood", prompt="rate", retries=retries)
    instance = Instance(InstanceConfig(name="canned", backend="scripted"), backend)
    result = AgentResult(name="mood")
    call = ModelCall(
        agent=agent,
        instance=instance,
        messages=[Message("system", "briefing"), Message("user", "role")],
        contract=contract_from_model(Mood),
        result=result,
        emit=lambda *a, **k: None,
        clock=lambda: 0.0,
    )
    return call, result


async def test_one_repair_carries_the_validation_error() -> None:
    backend = Replies('{"score": 9, "reply": "x"}', '{"score": 4, "reply": "x"}')
    call, result = _call(backend)
    assert await call.run() == {"score": 4, "reply": "x"}
    assert result.attempts == 2 and result.prompt_tokens == 20
    repair = backend.requests[1].messages
    assert repair[:2] == backend.requests[0].messages  # the briefing prefix is kept for the cache
    assert repair[2] == Message("assistant", '{"score": 9, "reply": "x"}')
    assert "score" in repair[3].content and "less than or equal to 5" in repair[3].content


async def test_a_second_invalid_reply_fails_the_agent() -> None:
    backend = Replies('{"score": 9}', "still not it")
    call, result = _call(backend)
    with pytest.raises(OutputInvalid, match="not a JSON object"):
        await call.run()
    assert result.attempts == 2


async def test_retries_start_over_after_a_failed_repair() -> None:
    backend = Replies('{"score": 0}', '{"score": 0}', '{"score": 2, "reply": "fine"}')
    call, result = _call(backend, retries=1)
    assert (await call.run())["score"] == 2
    assert result.attempts == 3


def _checked_call(backend: Replies, check: object) -> tuple[ModelCall, AgentResult]:
    from cantata.context import FunctionContext

    call, result = _call(backend)
    call.check = check  # type: ignore[assignment]
    call.context = FunctionContext(message="m", user="u", session="s", turn=1, inputs={}, missing=[], memory={})
    return call, result


async def test_check_corrects_a_valid_reply() -> None:
    def clamp(ctx: CheckContext) -> dict[str, object]:
        return {**ctx.output, "reply": ctx.output["reply"].upper()}

    call, _ = _checked_call(Replies('{"score": 2, "reply": "fine"}'), clamp)
    assert await call.run() == {"score": 2, "reply": "FINE"}


async def test_check_rejection_regenerates_once_with_the_reason() -> None:
    seen: list[tuple[object, bool]] = []

    def no_pills(ctx: CheckContext) -> object:
        seen.append((ctx.output, ctx.last_chance))
        if ctx.output and "pills" in ctx.output["reply"]:
            if ctx.last_chance:
                return {"score": 1, "reply": "Let's talk about how you are doing."}
            raise Rejected("it gives medication advice")
        return ctx.output

    backend = Replies('{"score": 3, "reply": "take pills"}', '{"score": 3, "reply": "how are you sleeping?"}')
    call, result = _checked_call(backend, no_pills)
    assert (await call.run())["reply"] == "how are you sleeping?"
    assert "it gives medication advice" in backend.requests[1].messages[-1].content
    assert [last for _, last in seen] == [False, True] and result.attempts == 2
    # Rejected twice: the last chance gives the safe output instead.
    backend = Replies('{"score": 3, "reply": "take pills"}', '{"score": 3, "reply": "more pills"}')
    call, _ = _checked_call(backend, no_pills)
    assert (await call.run())["reply"] == "Let's talk about how you are doing."


async def test_check_that_still_refuses_fails_the_agent() -> None:
    def never(ctx: CheckContext) -> object:
        raise Rejected("never good enough")

    call, _ = _checked_call(Replies('{"score": 3, "reply": "a"}', '{"score": 3, "reply": "b"}'), never)
    with pytest.raises(OutputInvalid, match="rejected the reply twice: never good enough"):
        await call.run()


async def test_check_gets_the_last_chance_when_the_model_fails() -> None:
    class Down(Replies):
        async def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
            raise BackendUnavailable("instance 'canned': connection refused")
            yield Chunk()  # pragma: no cover - makes this an async generator

    def safe(ctx: CheckContext) -> object:
        assert ctx.output is None and ctx.last_chance
        return {"score": 1, "reply": "Are you safe right now?"}

    call, result = _checked_call(Down(), safe)
    assert (await call.run())["reply"] == "Are you safe right now?"
    assert result.attempts == 1


def test_the_prompt_shows_an_outline_of_the_schema_not_the_schema() -> None:
    from cantata.structured import format_instruction

    text = format_instruction(contract_from_model(Mood))
    assert '{"score": integer 1-5, "reply": text}' in text
    assert "$defs" not in text and "properties" not in text


# -- a reply cut at max_tokens is reported as cut, never repaired --------------------------


def _scripted_call(
    *, max_tokens: int, contract: bool
) -> tuple[ModelCall, AgentResult, list[tuple[str, dict[str, object]]]]:
    from cantata.backends.scripted import ScriptedBackend

    config = InstanceConfig(name="scripted", backend="scripted")
    events: list[tuple[str, dict[str, object]]] = []
    result = AgentResult(name="mood")
    call = ModelCall(
        agent=AgentSpec(name="mood", prompt="rate", max_tokens=max_tokens),
        instance=Instance(config, ScriptedBackend(config)),
        messages=[Message("system", "briefing"), Message("user", "role")],
        contract=contract_from_model(Mood) if contract else None,
        result=result,
        emit=lambda type, agent, **data: events.append((type, data)),
        clock=lambda: 0.0,
    )
    return call, result, events


async def test_a_structured_reply_cut_at_max_tokens_fails_as_cut_without_a_repair() -> None:
    call, result, events = _scripted_call(max_tokens=3, contract=True)
    with pytest.raises(OutputTruncated, match="cut at max_tokens=3"):
        await call.run()
    assert result.attempts == 1, "no repair call"
    assert not [data for type, data in events if type == "agent_retry"]
    assert result.finish_reason == "length"


async def test_a_text_reply_cut_at_max_tokens_is_kept_and_flagged() -> None:
    call, result, _ = _scripted_call(max_tokens=2, contract=False)
    text = await call.run()
    assert isinstance(text, str) and len(text) == 8  # two scripted tokens of four characters
    assert result.finish_reason == "length"
    whole, result, _ = _scripted_call(max_tokens=200, contract=True)
    assert (await whole.run())["reply"]
    assert result.finish_reason == "stop"


def test_refs_are_followed_the_same_way_by_prompts_and_the_scripted_backend() -> None:
    from cantata.backends.scripted import sample
    from cantata.structured import contract_from_schema, format_instruction

    schema = {
        "type": "object",
        "properties": {"mood": {"$ref": "#/$defs/Alias"}, "pair": {"$ref": "#/$defs/a~1b"}},
        "required": ["mood", "pair"],
        "$defs": {
            "Alias": {"$ref": "#/$defs/Mood"},
            "Mood": {"enum": ["calm", "tense"], "description": "How it sounds."},
            "a/b": {"type": "integer", "minimum": 3, "maximum": 5},
        },
    }
    contract = contract_from_schema(schema, name="m", where="here")
    text = format_instruction(contract)
    assert '"mood": "calm"|"tense"' in text and '"pair": integer 3-5' in text and "How it sounds." in text
    assert contract.validate_data(sample(schema, schema, "m")) == {"mood": "calm", "pair": 4}


def test_an_unresolvable_ref_is_rejected_at_load(write: WriteFile) -> None:
    from cantata.loader import load_pipeline

    path = write(
        "p.yaml",
        "name: x\nagents:\n  - name: a\n    prompt: x\n    output:\n      type: object\n"
        "      properties: {m: {$ref: '#/$defs/Nope'}}\n",
    )
    with pytest.raises(SpecError, match=r"p.yaml:5: invalid JSON Schema: cannot resolve \$ref '#/\$defs/Nope'"):
        load_pipeline(path)
