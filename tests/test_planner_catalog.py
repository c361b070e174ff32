"""The catalogue and the memory arithmetic, checked against published figures."""

from __future__ import annotations

import pytest

from cantata.errors import UserError
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.memory import GB, GIB, KIB, kv_bytes_for_sequence, kv_bytes_per_token, weight_bytes

REQUIRED_MODELS = [
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "qwen2.5-coder-7b",
    "qwen2.5-coder-32b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "glm-4.5-air",
    "smollm2-135m",
]


def weights(name: str, quant: str) -> float:
    catalog = load_catalog()
    return weight_bytes(catalog.model(name), catalog.quantization(quant))


def within(value: float, published: float, tolerance: float = 0.10) -> bool:
    return abs(value - published) <= tolerance * published


def test_qwen3_235b_awq_weights_match_the_published_125_gb() -> None:
    assert within(weights("qwen3-235b-a22b", "awq") / GB, 125)


def test_qwen3_32b_q4_k_m_weights_match_the_published_20_gb() -> None:
    assert within(weights("qwen3-32b", "q4_k_m") / GB, 20)


def test_llama_31_8b_q4_k_m_weights_match_the_published_4_58_gib() -> None:
    assert within(weights("llama-3.1-8b", "q4_k_m") / GIB, 4.58)


@pytest.mark.parametrize(("name", "published_kib"), [("qwen3-30b-a3b", 96), ("qwen3-235b-a22b", 188)])
def test_kv_cache_per_token_matches_published_figures(name: str, published_kib: float) -> None:
    assert within(kv_bytes_per_token(load_catalog().model(name)) / KIB, published_kib)


def test_kv_cache_grows_with_context_except_in_sliding_window_layers() -> None:
    catalog = load_catalog()
    dense = catalog.model("qwen3-8b")
    assert kv_bytes_for_sequence(dense, 8192) == pytest.approx(2 * kv_bytes_for_sequence(dense, 4096))
    # gpt-oss: half of its layers attend to 128 tokens only, so doubling the context
    # adds the full-attention layers' share alone.
    oss = catalog.model("gpt-oss-20b")
    grown = kv_bytes_for_sequence(oss, 8192) - kv_bytes_for_sequence(oss, 4096)
    assert grown == pytest.approx(kv_bytes_per_token(oss) * 4096)
    assert kv_bytes_per_token(oss) == 2 * 12 * 8 * 64 * 2


def test_the_catalogue_holds_every_required_model_with_its_architecture() -> None:
    catalog = load_catalog()
    for name in REQUIRED_MODELS:
        model = catalog.model(name)
        assert model.layers > 0 and model.hidden_size > 0 and model.head_dim > 0
        assert model.attention_heads % model.kv_heads == 0
        assert model.native_context >= 8192
    moe = [m.name for m in catalog.models if m.is_moe]
    assert set(moe) == {"qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b", "glm-4.5-air"}
    for name in moe:
        model = catalog.model(name)
        assert model.active_params < model.params


def test_published_scores_carry_their_source() -> None:
    catalog = load_catalog()
    scored = [(m.name, b, s) for m in catalog.models for b, s in m.scores.items()]
    assert len(scored) >= 15
    assert all(s.source for _, _, s in scored)
    assert {b for _, b, _ in scored} == {"gpqa", "humaneval", "tau_bench"}


def test_quantisations_have_their_bits_per_weight() -> None:
    catalog = load_catalog()
    bits = {name: q.bits_per_weight for name, q in catalog.quantizations.items()}
    assert bits["bf16"] == 16
    assert bits["fp8"] == 8
    assert bits["awq"] == pytest.approx(4.25)
    assert bits["gptq"] == pytest.approx(4.25)
    assert bits["q4_k_m"] == pytest.approx(4.89)
    assert bits["q8_0"] == pytest.approx(8.5)


def test_model_names_match_without_regard_to_case() -> None:
    choice = parse_model_arg("Qwen3-235B-A22B:BF16", load_catalog())
    assert choice.role is None
    assert choice.model.name == "qwen3-235b-a22b"
    assert choice.quant is not None and choice.quant.name == "bf16"
    role_choice = parse_model_arg("builder=qwen2.5-coder-32b:awq", load_catalog())
    assert role_choice.role == "builder" and role_choice.model.name == "qwen2.5-coder-32b"


def test_an_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        parse_model_arg("qwen9-1t", load_catalog())
    message = str(caught.value)
    assert "unknown model 'qwen9-1t'" in message
    assert "qwen3-30b-a3b" in message and "gpt-oss-120b" in message


def test_an_unknown_quantisation_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match="unknown quantisation 'int3'.*awq"):
        parse_model_arg("qwen3-8b:int3", load_catalog())


def test_gpt_oss_is_planned_only_in_the_format_it_ships_in() -> None:
    with pytest.raises(UserError, match="only as mxfp4"):
        parse_model_arg("gpt-oss-20b:awq", load_catalog())
    assert "mxfp4" not in [q.name for q in load_catalog().quantizations_for(load_catalog().model("qwen3-8b"))]


def test_a_need_without_a_published_score_uses_a_discounted_proxy() -> None:
    catalog = load_catalog()
    coder = catalog.role_score(catalog.model("qwen2.5-coder-32b"), "code")
    assert (coder.benchmark, coder.value, coder.proxy) == ("humaneval", 92.7, False)
    qwen = catalog.role_score(catalog.model("qwen3-32b"), "code")
    assert qwen.proxy and qwen.benchmark == "gpqa" and qwen.value < 68.4
    nothing = catalog.role_score(catalog.model("smollm2-135m"), "reasoning")
    assert nothing.value == 0 and nothing.benchmark is None
