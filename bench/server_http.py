"""The server over HTTP: 200 concurrent chat sessions streaming from `cantata serve`
(a subprocess on loopback) against scripted instances with fixed latencies, and the
same 200 turns in process, for the ratio. Every figure is measured in this run:
  - errors (target: zero);
  - median turn time over HTTP / in process (target <= 1.05x);
  - p50 and p99 of the time to the first early-reply byte and to the final reply,
    over the DAG's critical path;
  - the server's own CPU time per turn (from /proc, user + system).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent))

from overhead import LATENCY, config, critical_path, write_pipeline  # noqa: E402

from cantata.loader import load_pipeline  # noqa: E402
from cantata.runtime import Cantata  # noqa: E402
from tests.helpers.servers import free_port  # noqa: E402

SESSIONS = 200


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def phase(chunk: dict[str, Any]) -> str | None:
    """Which reply a streamed text chunk belongs to: "early", "separator" or "merged"."""
    info = chunk.get("cantata")
    return info.get("phase") if isinstance(info, dict) else None


async def one_chat(client: httpx.AsyncClient, i: int) -> tuple[float, float]:
    """(time to the first early-reply byte, time to the final reply) of one streamed turn."""
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": f"message {i}"}]}
    start = time.perf_counter()
    first = final = None
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {(await response.aread())[:200]!r}")
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk["choices"][0]["delta"].get("content"):
                first = first or time.perf_counter() - start
                # Each text chunk names its reply: the merged one comes after the separator.
                if phase(chunk) in ("separator", "merged") and final is None:
                    final = time.perf_counter() - start
    if first is None or final is None:
        raise RuntimeError("the stream had no early or no final reply")
    return first, final


async def over_http(url: str, count: int) -> tuple[list[tuple[float, float]], int, float]:
    limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=count + 10)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        await one_chat(client, -1)  # warm up
        start = time.perf_counter()
        results = await asyncio.gather(*(one_chat(client, i) for i in range(count)), return_exceptions=True)
        wall = time.perf_counter() - start
    ok = [r for r in results if isinstance(r, tuple)]
    return ok, len(results) - len(ok), wall


async def in_process(home: Path, pipeline_path: Path, count: int) -> list[float]:
    app = Cantata(config(LATENCY), home=home)
    pipeline = load_pipeline(pipeline_path)
    await app.run_turn(pipeline, "warm up")

    async def timed(i: int) -> float:
        start = time.perf_counter()
        await app.run_turn(pipeline, f"message {i}", user=f"user{i}")
        return time.perf_counter() - start

    times = await asyncio.gather(*(timed(i) for i in range(count)))
    await app.close()
    return list(times)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextmanager
def serving(folder: Path, config_path: Path, pipeline_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`cantata serve` on a free loopback port, its home under `folder`, until the block ends."""
    port = free_port()
    env = dict(os.environ, CANTATA_HOME=str(folder / "server-home"), PYTHONPATH=str(folder))
    command = [sys.executable, "-m", "cantata", "serve", "--port", str(port), "--config", str(config_path)]
    # stderr to a file, not a pipe: the server logs a line per request, and a pipe nobody
    # reads fills (64 KB) and then blocks the server in the middle of the run.
    log = folder / "serve.log"
    with log.open("wb") as stderr:
        server = subprocess.Popen(
            [*command, "--pipeline", str(pipeline_path)], env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"cantata serve did not start: {log.read_text(errors='replace')}")
            time.sleep(0.2)
        yield server, url
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    path = critical_path(LATENCY)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pipeline_path = write_pipeline(folder)
        lines = ["instances:"]
        for inst in config(LATENCY).instances:
            lines += [
                f"  - name: {inst.name}",
                "    backend: scripted",
                f"    latency_s: {inst.latency_s}",
                f"    serves: [{inst.name}]",
            ]
        (folder / "instances.yaml").write_text("\n".join(lines) + "\n")
        with serving(folder, folder / "instances.yaml", pipeline_path) as (server, url):
            cpu_before, client_before = cpu_seconds(server.pid), time.process_time()
            ok, errors, wall = asyncio.run(over_http(url, SESSIONS))
            cpu = cpu_seconds(server.pid) - cpu_before
            client_cpu = time.process_time() - client_before
        local = asyncio.run(in_process(folder / "local-home", pipeline_path, SESSIONS))
    firsts = [f for f, _ in ok]
    finals = [f for _, f in ok]
    ratio = statistics.median(finals) / statistics.median(local) if finals else float("nan")
    print(f"server over HTTP: {SESSIONS} concurrent streamed chat sessions, coaching-shaped DAG, scripted instances")
    print(f"  errors                              {errors}   (target 0)")
    print(f"  critical path                       {path:.3f} s; all {SESSIONS} turns in {wall:.3f} s")
    print(
        f"  median turn, HTTP / in process      {statistics.median(finals):.3f} s / {statistics.median(local):.3f} s"
        f" = {ratio:.3f}x   (target <= 1.05x)"
    )
    if ok:
        print(
            f"  first early byte  p50 / p99         {pct(firsts, 0.5):.3f} s / {pct(firsts, 0.99):.3f} s"
            f"   (early agent alone: {LATENCY['coach']:.3f} s)"
        )
        print(
            f"  final reply       p50 / p99         {pct(finals, 0.5):.3f} s / {pct(finals, 0.99):.3f} s"
            f" = {pct(finals, 0.5) / path:.3f}x / {pct(finals, 0.99) / path:.3f}x critical path"
        )
    print(f"  server CPU per turn                 {1000 * cpu / (SESSIONS + 1):.2f} ms (user + system, /proc)")
    print(
        f"  client CPU per turn (this process)  {1000 * client_cpu / (SESSIONS + 1):.2f} ms: on {os.cpu_count()} cores,"
        " client and server share the machine"
    )


if __name__ == "__main__":
    main()
