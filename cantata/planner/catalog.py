"""The model catalogue: architecture numbers, quantisations and published benchmark scores.

The data lives in `catalog.yaml` next to this module; this module only types it,
answers look-ups (case-insensitive, with the known names in every error) and turns a
benchmark table into the one number the planner compares for a role's need.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from cantata.errors import UserError
from cantata.spec import Need

CATALOG_FILE = Path(__file__).with_name("catalog.yaml")

Benchmark = Literal["gpqa", "humaneval", "tau_bench"]

# Which published benchmark speaks for which need. Chat has no benchmark of its own
# in the catalogue; GPQA stands in as the broadest measure of general ability.
NEED_BENCHMARK: dict[Need, Benchmark] = {
    "reasoning": "gpqa",
    "code": "humaneval",
    "tool_use": "tau_bench",
    "chat": "gpqa",
}

# When a model has no published score for a need, its GPQA score is used, discounted:
# a model whose publisher did not report a task is not assumed to be as good at it as
# its general ability suggests, and a model with evidence should win a near tie.
PROXY_BENCHMARK: Benchmark = "gpqa"
PROXY_DISCOUNT = 0.85


class Quantization(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    bits_per_weight: float = Field(gt=0)
    format: Literal["safetensors", "gguf"]
    vllm_flag: str | None = None
    quality: float = Field(gt=0, le=1)
    native_only: bool = Field(False, description="Only for models that list it: a format they ship in.")

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(ge=0, le=100)
    source: str


class ModelSpec(BaseModel):
    """One catalogue model, as its config.json and model card describe it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    family: str
    hf_repo: str
    layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    attention_heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    params_b: float = Field(gt=0, description="Total parameters, billions.")
    active_params_b: float | None = Field(None, gt=0, description="Per token, for mixture-of-experts.")
    experts: int | None = Field(None, gt=0)
    experts_per_token: int | None = Field(None, gt=0)
    sliding_window: int | None = Field(None, gt=0)
    sliding_window_layers: int = Field(0, ge=0)
    native_context: int = Field(gt=0)
    reasoning_parser: str | None = None
    tool_parser: str | None = None
    quantizations: list[str] | None = Field(None, description="Only these; default: every catalogue one.")
    checkpoints: dict[str, str] = Field(default_factory=dict)
    scores: dict[Benchmark, Score] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if (self.experts is None) != (self.experts_per_token is None) or (
            (self.experts is None) != (self.active_params_b is None)
        ):
            raise ValueError(f"{self.name}: experts, experts_per_token and active_params_b go together")
        if self.sliding_window_layers > self.layers:
            raise ValueError(f"{self.name}: more sliding-window layers than layers")
        return self

    @property
    def params(self) -> float:
        return self.params_b * 1e9

    @property
    def active_params(self) -> float:
        """Parameters read per token: all of them, except for mixture-of-experts."""
        return (self.active_params_b or self.params_b) * 1e9

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    def score(self, benchmark: Benchmark) -> Score | None:
        return self.scores.get(benchmark)


class RoleScore(BaseModel):
    """The number the planner compares for one need, and where it comes from."""

    model_config = ConfigDict(frozen=True)

    benchmark: Benchmark | None
    value: float
    source: str | None
    proxy: bool = False


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    quantizations: dict[str, Quantization]
    benchmarks: dict[Benchmark, str]
    models: list[ModelSpec]

    @model_validator(mode="after")
    def _check(self) -> Catalog:
        names = [m.name for m in self.models]
        duplicated = {n for n in names if names.count(n) > 1}
        if duplicated:
            raise ValueError(f"models defined twice: {', '.join(sorted(duplicated))}")
        for model in self.models:
            for quant in [*(model.quantizations or []), *model.checkpoints]:
                if quant not in self.quantizations:
                    raise ValueError(f"{model.name}: unknown quantisation '{quant}'")
        return self

    def model(self, name: str) -> ModelSpec:
        wanted = name.strip().lower()
        for model in self.models:
            if model.name == wanted:
                return model
        raise UserError(f"unknown model '{name}'; known models: {', '.join(m.name for m in self.models)}")

    def quantization(self, name: str) -> Quantization:
        wanted = name.strip().lower()
        if wanted in self.quantizations:
            return self.quantizations[wanted]
        raise UserError(f"unknown quantisation '{name}'; known: {', '.join(self.quantizations)}")

    def quantizations_for(self, model: ModelSpec) -> list[Quantization]:
        if model.quantizations:
            return [self.quantizations[n] for n in model.quantizations]
        return [q for q in self.quantizations.values() if not q.native_only]

    def check_quantization(self, model: ModelSpec, quant: Quantization) -> None:
        allowed = [q.name for q in self.quantizations_for(model)]
        if quant.name not in allowed:
            raise UserError(f"{model.name} is planned only as {', '.join(allowed)}, not {quant.name}")

    def role_score(self, model: ModelSpec, need: Need) -> RoleScore:
        """The model's published score on the need's benchmark, else a discounted proxy."""
        benchmark = NEED_BENCHMARK[need]
        score = model.score(benchmark)
        if score is not None:
            return RoleScore(benchmark=benchmark, value=score.value, source=score.source)
        proxy = model.score(PROXY_BENCHMARK)
        if proxy is not None:
            return RoleScore(
                benchmark=PROXY_BENCHMARK, value=proxy.value * PROXY_DISCOUNT, source=proxy.source, proxy=True
            )
        # Nothing published: the model can still be placed, it just never wins on quality.
        return RoleScore(benchmark=None, value=0.0, source=None, proxy=True)


@cache
def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    quantizations = {name: {"name": name, **body} for name, body in raw["quantizations"].items()}
    return Catalog.model_validate({**raw, "quantizations": quantizations})


class ModelChoice(BaseModel):
    """A `--model [ROLE=]NAME[:QUANT]` argument, resolved against the catalogue."""

    model_config = ConfigDict(frozen=True)

    role: str | None
    model: ModelSpec
    quant: Quantization | None


def parse_model_arg(text: str, catalog: Catalog) -> ModelChoice:
    role: str | None = None
    rest = text.strip()
    if "=" in rest:
        role, _, rest = rest.partition("=")
        role = role.strip()
        if not role:
            raise UserError(f"--model '{text}': expected [ROLE=]NAME[:QUANT], e.g. builder=qwen2.5-coder-32b:awq")
    name, _, quant_name = rest.partition(":")
    if not name.strip():
        raise UserError(f"--model '{text}': expected [ROLE=]NAME[:QUANT], e.g. qwen3-30b-a3b:awq")
    model = catalog.model(name)
    quant = catalog.quantization(quant_name) if quant_name.strip() else None
    if quant is not None:
        catalog.check_quantization(model, quant)
    return ModelChoice(role=role, model=model, quant=quant)
