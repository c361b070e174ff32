"""The DAG a pipeline's `reads` describe: its order, and the cycle that would forbid one.

`graphlib` does the graph work; what is ours is the tie-break (file order, so the order
a user reads in `cantata validate` is the one they wrote wherever the graph allows it)
and the cycle written the way a user thinks of it: a -> b -> a where a reads b reads a.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from graphlib import CycleError, TopologicalSorter


def topological_order(reads: Mapping[str, Sequence[str]]) -> list[str]:
    """Every name after the names it reads; among those ready, the first in file order.

    `reads` is in file order and closed (every name read is a key); it has no cycle.
    """
    position = {name: i for i, name in enumerate(reads)}
    sorter = TopologicalSorter(reads)
    sorter.prepare()
    ready = [(position[name], name) for name in sorter.get_ready()]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        sorter.done(name)
        for after in sorter.get_ready():
            heapq.heappush(ready, (position[after], after))
    return order


def find_cycle(reads: Mapping[str, Sequence[str]]) -> list[str] | None:
    """A cycle as [a, b, ..., a] where a reads b reads ... reads a, starting at the first
    of its names in file order; or None."""
    try:
        TopologicalSorter(reads).prepare()
    except CycleError as exc:
        # graphlib lists each node before the node that depends on it (b before a when a
        # reads b): reversed, it reads in the direction of `reads`.
        found: list[str] = list(reversed(exc.args[1]))[:-1]
        position = {name: i for i, name in enumerate(reads)}
        start = min(range(len(found)), key=lambda i: position[found[i]])
        cycle = found[start:] + found[:start]
        return [*cycle, cycle[0]]
    return None
