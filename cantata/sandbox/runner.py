"""The host's side of the sandbox: it starts the child under bubblewrap, feeds it, stops it.

A generated agent's tool function, and the tester's runs of it, execute as
`python -I -S` (no site, no user paths) inside `bwrap` with:
- a new session, killed when its parent dies, its own PID namespace and /proc;
- no network (its own empty network namespace), no IPC, UTS or cgroup sharing;
- a read-only system (/usr), a private writable /tmp, the artefact folder read-only at
  /agent, and nothing else: not CANTATA_HOME, the database, the user's files, nor
  Cantata's environment variables (the environment is cleared);
- limits on CPU time, address space, processes, file size and open files, set by the
  child (child.py) before the tool is imported, plus a wall-clock kill from here.
Input and output cross as JSON on stdin/stdout.

When Cantata runs as root it starts bwrap as `nobody`: the kernel exempts root from the
process limit, and nobody may only read what the sandbox is given. The artefact is
copied into a fresh folder that nobody can read, so the agent's own folder under
CANTATA_HOME (often in a private home) never needs to be.

Where bubblewrap cannot run, generated code is refused with the reason, unless the
caller passes `sandbox=False` (the CLI's `--no-sandbox`), recorded by the caller.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from cantata.errors import BackendError, SandboxUnavailable

RUNNER = (Path(__file__).parent / "child.py").read_text(encoding="utf-8")
NOBODY = 65534
# The sandbox's interpreter: the system's, which lives under /usr (bound read-only) and
# which `nobody` can read; a Python under a private home could not be bound.
SYSTEM_PYTHON = "/usr/bin/python3"
MAX_OUTPUT_BYTES = 1 << 20


@dataclass(frozen=True)
class Limits:
    wall_s: float = 10.0
    cpu_s: int = 5
    memory_bytes: int = 512 << 20
    processes: int = 0  # processes and threads beyond the tool's own: a tool is a function
    file_bytes: int = 1 << 20
    open_files: int = 32


@dataclass(frozen=True)
class ToolRun:
    """What one sandboxed call gave: the output, or why there is none."""

    ok: bool
    output: Any = None
    error: str | None = None
    killed: bool = False  # stopped by the wall-clock kill
    sandboxed: bool = True


async def run_tool(
    folder: Path,
    module: str,
    function: str,
    value: Any,
    *,
    limits: Limits = Limits(),
    sandbox: bool = True,
    keywords: bool = False,
) -> ToolRun:
    """Call `module.function(value)` (with `keywords`, `module.function(**value)`) from the
    artefact `folder` in a sandboxed child."""
    if sandbox:
        reason = sandbox_problem()
        if reason is not None:
            raise SandboxUnavailable(
                f"generated code is run only under bubblewrap, and {reason}; install it "
                "(apt-get install bubblewrap) or pass --no-sandbox to run it without isolation"
            )
    as_nobody = sandbox and os.geteuid() == 0
    with tempfile.TemporaryDirectory(prefix="cantata-sandbox-") as tmp:
        agent = Path(tmp) / "agent"
        shutil.copytree(folder, agent, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if as_nobody:
            for path in [Path(tmp), *agent.rglob("*"), agent]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        uid = NOBODY if as_nobody else os.getuid()
        request = {
            "module": module,
            "function": function,
            "input": value,
            "keywords": keywords,
            # Where the runner imports the tool from: the bind mount, or (unsandboxed) the copy.
            "folder": "/agent" if sandbox else str(agent),
            "limits": _rlimits(limits, uid),
        }
        command = _bwrap_command(agent) if sandbox else _plain_command()
        return await _run(command, json.dumps(request).encode(), limits, as_nobody=as_nobody, sandboxed=sandbox)


class ToolContext(Protocol):
    """What a sandboxed function agent reads of the context it is called with (a
    cantata.FunctionContext, which the sandbox, below the running layer, does not import)."""

    @property
    def message(self) -> str: ...

    @property
    def inputs(self) -> dict[str, Any]: ...

    @property
    def options(self) -> dict[str, Any]: ...


def sandboxed_function(folder: Path, module: str, function: str) -> Callable[[ToolContext], Awaitable[Any]]:
    """A `function:` agent (`sandbox:module.function`) whose code runs only in the sandbox.
    It gets {"message", "inputs"} and returns a JSON value; a failure fails the agent.
    With the turn option no_sandbox (the factory's --no-sandbox) it runs unisolated."""

    async def call(ctx: ToolContext) -> Any:
        value = {"message": ctx.message, "inputs": ctx.inputs}
        run = await run_tool(folder, module, function, value, sandbox=not ctx.options.get("no_sandbox"))
        if not run.ok:
            raise BackendError(f"tool {module}.{function}: {run.error}")
        return run.output

    return call


def _bwrap_command(agent: Path) -> list[str]:
    return [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
        "--ro-bind", str(agent), "/agent",
        "--chdir", "/tmp",
        "--clearenv",
        "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        SYSTEM_PYTHON, "-I", "-S", "-c", RUNNER,
    ]  # fmt: skip


def _plain_command() -> list[str]:
    """--no-sandbox: still a separate process with the same limits, but no isolation."""
    return [SYSTEM_PYTHON if Path(SYSTEM_PYTHON).exists() else "python3", "-I", "-S", "-c", RUNNER]


async def _run(command: list[str], request: bytes, limits: Limits, *, as_nobody: bool, sandboxed: bool) -> ToolRun:
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},  # none of Cantata's variables
        start_new_session=True,
        user=NOBODY if as_nobody else None,
        group=NOBODY if as_nobody else None,
        extra_groups=[] if as_nobody else None,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(request), timeout=limits.wall_s)
    except TimeoutError:
        _kill(process)
        await process.wait()
        return ToolRun(
            ok=False, error=f"stopped after {limits.wall_s:g} s (wall-clock limit)", killed=True, sandboxed=sandboxed
        )
    finally:
        if process.returncode is None:
            _kill(process)
            await process.wait()
    return _result(process.returncode or 0, stdout[:MAX_OUTPUT_BYTES], stderr, sandboxed=sandboxed)


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # bwrap, and with it its PID namespace
    except ProcessLookupError:
        pass


def _result(code: int, stdout: bytes, stderr: bytes, *, sandboxed: bool) -> ToolRun:
    line = stdout.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
    try:
        payload = json.loads(line[0])
    except ValueError:
        payload = None
    if isinstance(payload, dict) and "ok" in payload:
        if payload["ok"]:
            return ToolRun(ok=True, output=payload.get("output"), sandboxed=sandboxed)
        return ToolRun(ok=False, error=str(payload.get("error")), sandboxed=sandboxed)
    # Killed by a signal: the child's own code is negative; bwrap reports 128 + signal.
    number = -code if code < 0 else code - 128 if code > 128 else 0
    if number:
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        why = "its CPU-time limit (SIGXCPU)" if name == "SIGXCPU" else f"signal {name}"
        return ToolRun(ok=False, error=f"the tool was stopped by {why}", killed=True, sandboxed=sandboxed)
    detail = stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
    return ToolRun(
        ok=False, error=f"the tool's process exited with code {code}: {detail[0][:300]}", sandboxed=sandboxed
    )


def _rlimits(limits: Limits, uid: int) -> dict[str, int]:
    # The process limit counts every process of the uid on the machine, so it is set
    # relative to what that uid runs now (bwrap's own two processes included).
    return {
        "cpu_s": limits.cpu_s,
        "memory_bytes": limits.memory_bytes,
        "processes": _processes_of(uid) + 3 + limits.processes,
        "file_bytes": limits.file_bytes,
        "open_files": limits.open_files,
    }


def _processes_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


@cache
def sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox here, or None when it can (probed once, for real)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if not Path(SYSTEM_PYTHON).exists():
        return f"the sandbox's interpreter {SYSTEM_PYTHON} is missing (apt-get install python3)"
    import subprocess

    as_nobody = os.geteuid() == 0
    probe = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
             "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc",
             "--dev", "/dev", SYSTEM_PYTHON, "-I", "-S", "-c", "pass"]  # fmt: skip
    try:
        done = subprocess.run(
            probe,
            capture_output=True,
            timeout=20,
            user=NOBODY if as_nobody else None,
            group=NOBODY if as_nobody else None,
            extra_groups=[] if as_nobody else None,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"bubblewrap cannot create a sandbox here ({detail[0]})"
    return None
