"""The planner: from a pipeline and hardware to instances, GPUs, launch commands and turn times.

catalog   models, quantisations, benchmark scores (catalog.yaml)
hardware  GPUs and profiles (hardware.yaml), NODESxGPUSxTYPE and custom specs
workload  what each role of a pipeline needs per turn
memory    weights, KV cache, runtime overhead
placement packing instances onto GPUs (tensor / pipeline parallel)
speed     decode and prefill times, a turn through the DAG
selection choosing models per role and merging them into instances
plan      the plan, its assembly, replicas per node, infeasibility with the nearest changes
emit      vllm serve commands (and Ray), the Cantata instances config
compose   a compose file: model servers, PostgreSQL, Cantata server and worker
render    the readable table
cli       the `plan` click command
"""

from cantata.planner.plan import Plan, PlanInfeasible, make_plan

__all__ = ["Plan", "PlanInfeasible", "make_plan"]
