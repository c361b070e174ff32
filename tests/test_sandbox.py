"""Generated code under real bubblewrap: it computes, and every way out is stopped and reported."""

from __future__ import annotations

import os
import socket
import textwrap
import threading
from pathlib import Path

import pytest

from cantata.errors import SandboxUnavailable
from cantata.sandbox import Limits, run_tool
from cantata.sandbox import runner as sandbox

pytestmark = pytest.mark.skipif(
    # CI runs `make test`, which installs bubblewrap: there a missing one must fail, not skip.
    sandbox.sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"bubblewrap unusable: {sandbox.sandbox_problem()}",
)


def tool(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "artefact"
    folder.mkdir(exist_ok=True)
    (folder / "tool.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return folder


async def test_a_tool_computes_on_json_in_and_out(tmp_path: Path) -> None:
    folder = tool(
        tmp_path,
        """
        import re
        def run(value):
            return {"owners": sorted(set(re.findall(r"@(\\w+)", value["notes"])))}
    """,
    )
    result = await run_tool(folder, "tool", "run", {"notes": "@ana sends it, @ben reviews, @ana ships"})
    assert result.ok and result.output == {"owners": ["ana", "ben"]} and result.sandboxed


async def test_a_tool_that_raises_is_reported_not_a_crash(tmp_path: Path) -> None:
    folder = tool(tmp_path, "def run(value):\n    return 1 / value\n")
    result = await run_tool(folder, "tool", "run", 0)
    assert not result.ok and result.error is not None and result.error.startswith("ZeroDivisionError")


async def test_no_network_even_to_a_server_on_loopback(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(3)

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    folder = tool(
        tmp_path,
        f"""
        import socket
        def run(value):
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
            return "connected"
    """,
    )
    result = await run_tool(folder, "tool", "run", None)
    thread.join()
    server.close()
    assert not result.ok and "ConnectionRefused" in (result.error or "") and accepted == []


async def test_writes_outside_its_temp_folder_fail_and_nothing_outside_changes(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    folder = tool(
        tmp_path,
        f"""
        def run(value):
            errors = []
            for path in ({str(outside)!r}, "/agent/tool.py", "/usr/evil", "/tmp/scratch"):
                try:
                    with open(path, "w") as f:
                        f.write("pwned")
                    errors.append(path + ": written")
                except OSError as exc:
                    errors.append(path + ": " + type(exc).__name__)
            return errors
    """,
    )
    source = (folder / "tool.py").read_text()
    result = await run_tool(folder, "tool", "run", None)
    assert result.ok
    written = {line.split(": ")[0]: line.split(": ")[1] for line in result.output}
    assert written["/tmp/scratch"] == "written"  # its own private temp folder
    assert all(v != "written" for k, v in written.items() if k != "/tmp/scratch")
    assert not outside.exists() and (folder / "tool.py").read_text() == source


async def test_the_database_and_the_environment_are_out_of_reach(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "cantata.db").write_text("secret rows")
    monkeypatch.setenv("CANTATA_SECRET_KEY", "sk-do-not-leak")
    folder = tool(
        tmp_path,
        f"""
        import os
        def run(value):
            try:
                data = open({str(home / "cantata.db")!r}).read()
            except OSError as exc:
                data = type(exc).__name__
            return {{"db": data, "env": dict(os.environ)}}
    """,
    )
    result = await run_tool(folder, "tool", "run", None)
    assert result.ok
    assert result.output["db"] == "FileNotFoundError"
    assert "sk-do-not-leak" not in str(result.output["env"]) and "CANTATA_HOME" not in result.output["env"]


async def test_a_fork_bomb_is_stopped(tmp_path: Path) -> None:
    folder = tool(
        tmp_path,
        """
        import os
        def run(value):
            children = 0
            while True:
                os.fork()
                children += 1
    """,
    )
    result = await run_tool(folder, "tool", "run", None, limits=Limits(wall_s=10))
    # The process limit refuses the first fork (or, on a slow machine, the clock kills it).
    assert not result.ok and ("BlockingIOError" in (result.error or "") or result.killed)


async def test_unbounded_allocation_is_stopped(tmp_path: Path) -> None:
    folder = tool(
        tmp_path,
        """
        def run(value):
            hoard = []
            while True:
                hoard.append(bytearray(50 * 1024 * 1024))
    """,
    )
    result = await run_tool(folder, "tool", "run", None, limits=Limits(memory_bytes=256 << 20))
    assert not result.ok and "MemoryError" in (result.error or "")


async def test_an_endless_loop_is_stopped_by_its_cpu_limit(tmp_path: Path) -> None:
    folder = tool(tmp_path, "def run(value):\n    while True:\n        pass\n")
    result = await run_tool(folder, "tool", "run", None, limits=Limits(cpu_s=1, wall_s=20))
    # Stopped by the CPU limit, not by the wall-clock kill (whose error names the wall clock).
    assert not result.ok and result.killed and "CPU" in (result.error or "")


async def test_a_sleeping_tool_is_killed_at_the_wall_clock_limit(tmp_path: Path) -> None:
    folder = tool(tmp_path, "import time\ndef run(value):\n    time.sleep(60)\n")
    result = await run_tool(folder, "tool", "run", None, limits=Limits(wall_s=1))
    assert not result.ok and result.killed and "wall-clock" in (result.error or "")


async def test_without_bubblewrap_generated_code_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tool(tmp_path, "def run(value):\n    return value\n")
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(SandboxUnavailable, match="bwrap.*not installed.*--no-sandbox"):
        await run_tool(folder, "tool", "run", 1)
    unsandboxed = await run_tool(folder, "tool", "run", 1, sandbox=False)
    assert unsandboxed.ok and unsandboxed.output == 1 and not unsandboxed.sandboxed
