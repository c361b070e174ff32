"""`make bench`: run every benchmark and print its figures (not timed tests)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import coaching  # noqa: E402
import coaching_quality  # noqa: E402
import durability  # noqa: E402
import factory  # noqa: E402
import faults  # noqa: E402
import overhead  # noqa: E402
import replicas  # noqa: E402
import safety  # noqa: E402
import server_http  # noqa: E402  (not http.py: bench/ is first on sys.path and would shadow the stdlib)
import tools  # noqa: E402
import workers  # noqa: E402

if __name__ == "__main__":
    overhead.main()
    print()
    safety.main()
    print()
    coaching.main()
    print()
    coaching_quality.main()
    print()
    server_http.main()
    print()
    faults.main()
    print()
    durability.main()
    print()
    replicas.main()
    print()
    workers.main()
    print()
    factory.main()
    print()
    tools.main()
