"""Hardware profiles and custom specs."""

from __future__ import annotations

import pytest

from cantata.errors import UserError
from cantata.planner.hardware import profile_names, resolve_hardware


def test_every_named_profile_exists() -> None:
    assert set(profile_names()) >= {"1x4090", "2x4090", "a40", "4xa40", "a100-211", "h100", "8xh100", "h200"}


@pytest.mark.parametrize(
    ("name", "count", "memory", "bandwidth"),
    [
        ("1x4090", 1, 24, 1008),
        ("2x4090", 2, 24, 1008),
        ("a40", 1, 48, 696),
        ("4xa40", 4, 48, 696),
        ("h100", 1, 80, 3350),
        ("8xh100", 8, 80, 3350),
        ("h200", 1, 141, 4800),
    ],
)
def test_profiles_carry_the_gpu_facts(name: str, count: int, memory: float, bandwidth: float) -> None:
    hardware = resolve_hardware(name)
    assert len(hardware.gpus) == count
    assert all(g.spec.memory_gb == memory and g.spec.bandwidth_gbs == bandwidth for g in hardware.gpus)
    assert all(g.spec.tflops > 0 for g in hardware.gpus)
    assert len(hardware.nodes) == 1


def test_the_a100_cluster_spans_nodes_of_both_a100_sizes() -> None:
    hardware = resolve_hardware("A100-211")
    assert len(hardware.nodes) == 2
    specs = {(g.spec.memory_gb, g.spec.bandwidth_gbs) for g in hardware.gpus}
    assert specs == {(80, 2039), (40, 1555)}


def test_a_custom_spec_is_one_node_of_identical_gpus() -> None:
    hardware = resolve_hardware("2x24GB@1008")
    assert [(g.node, g.index) for g in hardware.gpus] == [(0, 0), (0, 1)]
    assert hardware.gpus[0].spec.memory_gb == 24 and hardware.gpus[0].spec.bandwidth_gbs == 1008
    assert resolve_hardware("4x80gb@3350/989").gpus[0].spec.tflops == 989


@pytest.mark.parametrize("spec", ["2x24@1008", "2x24GB", "x24GB@1008", "2x24GB@fast", "0x24GB@1008"])
def test_a_malformed_custom_spec_says_the_expected_form(spec: str) -> None:
    with pytest.raises(UserError) as caught:
        resolve_hardware(spec)
    assert "COUNTxMEMGB@BANDWIDTH" in str(caught.value) and "2x24GB@1008" in str(caught.value)


def test_an_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        resolve_hardware("tpu-v5")
    message = str(caught.value)
    assert "unknown hardware profile 'tpu-v5'" in message
    assert "1x4090" in message and "a100-211" in message and "8xh100" in message
