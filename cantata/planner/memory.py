"""Memory arithmetic: weights, KV cache, runtime overhead, and their share per GPU.

weights      = parameters x bits per weight / 8
KV per token = 2 (K and V) x layers x KV heads x head dim x bytes per element
KV budget    = sequences in flight x context x KV per token
"""

from __future__ import annotations

from cantata.planner.catalog import ModelSpec, Quantization

GB = 1e9
GIB = 2**30
KIB = 2**10

# The KV cache is kept in BF16 (vLLM's default --kv-cache-dtype auto).
KV_ELEMENT_BYTES = 2

# Per instance and per GPU it occupies: CUDA context, CUDA graphs, activation and
# sampler buffers sized by vLLM's profiling run. About 1 GB is what a vLLM process
# holds beyond weights and KV cache on a single GPU at the default batch limits.
RUNTIME_OVERHEAD_BYTES = 1.0 * GB


def weight_bytes(model: ModelSpec, quant: Quantization) -> float:
    return model.params * quant.bytes_per_weight


def kv_bytes_per_token(model: ModelSpec) -> float:
    """KV bytes one more token of context costs (layers with full attention only)."""
    full_layers = model.layers - model.sliding_window_layers
    return 2 * full_layers * model.kv_heads * model.head_dim * KV_ELEMENT_BYTES


def kv_bytes_for_sequence(model: ModelSpec, tokens: int) -> float:
    """KV bytes of one sequence of `tokens`: sliding-window layers stop growing at the window."""
    sliding = 0.0
    if model.sliding_window is not None and model.sliding_window_layers:
        per_token = 2 * model.sliding_window_layers * model.kv_heads * model.head_dim * KV_ELEMENT_BYTES
        sliding = per_token * min(tokens, model.sliding_window)
    return kv_bytes_per_token(model) * tokens + sliding


def kv_replication(model: ModelSpec, tensor_parallel: int) -> float:
    """With more tensor-parallel ranks than KV heads, vLLM replicates heads: each rank keeps one."""
    return max(1.0, tensor_parallel / model.kv_heads)


def per_gpu_bytes(
    model: ModelSpec, quant: Quantization, kv_budget: float, tensor_parallel: int, pipeline_parallel: int
) -> float:
    """What one GPU of an instance holds: its share of weights and KV cache, plus runtime overhead."""
    shards = tensor_parallel * pipeline_parallel
    weights = weight_bytes(model, quant) / shards
    kv = kv_budget * kv_replication(model, tensor_parallel) / shards
    return weights + kv + RUNTIME_OVERHEAD_BYTES
