"""The factory on the real embedded model, as a user runs it: `cantata factory ... --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cantata.factory import sandbox

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(sandbox.sandbox_problem() is not None and not os.environ.get("CI"), reason="no bubblewrap"),
]

REQUEST = "an agent that extracts action items with owners and due dates from meeting notes"
ROLES = ["orchestrator", "analyst", "architect", "builder", "critic", "tester", "fixer", "documenter", "deployer"]


def test_the_factory_on_smollm2_runs_every_role_and_records_what_it_made(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cantata", "factory", REQUEST, "--json", "--max-iterations", "1"],
        capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    task = json.loads(done.stdout)
    agents = {a["name"]: a for a in task["turn"]["agents"]}
    assert list(agents) == ROLES
    ran = [name for name, agent in agents.items() if agent["status"] in ("ok", "failed")]
    assert task["deployed"] or task["reason"], "it deploys, or says why not"
    assert done.returncode == (0 if task["deployed"] else 1)
    if task["deployed"]:
        assert (home / "agents" / task["agent"] / str(task["version"]) / "card.md").exists()
        return
    if agents["tester"]["status"] == "ok":
        assert ran == ROLES, "with an artefact to test, every role ran"
        # Not deployed: the failing tests are listed, and the artefact is kept on disk.
        assert task["failing_tests"], task["reason"]
        turn_dir = home / "factory" / f"turn-{task['turn_id']}"
        assert (turn_dir / "iteration-1" / "agent" / "pipeline.yaml").exists()
