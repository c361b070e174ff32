"""The program that runs inside the sandbox: limits first, then the tool function, JSON out.

It is passed to the sandbox's interpreter as source text (`python -I -S -c`), so it
imports nothing of Cantata and needs no file of the host. It reads one JSON request
on stdin: {"module", "function", "input", "folder", "limits": {...}}, lowers its resource
limits (they can only go down, and the tool inherits them), imports the tool module from
the artefact folder it is given (/agent, read-only, in the sandbox), calls the function
with the input, and writes one JSON line on stdout: {"ok": true, "output": ...} or {"ok": false, "error": "..."}.
"""

import json
import resource
import sys

LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "file_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
}


def main() -> None:
    request = json.loads(sys.stdin.read())
    for key, which in LIMITS.items():
        value = int(request["limits"][key])
        # CPU: SIGXCPU at the soft limit (reported as such), SIGKILL a second later.
        resource.setrlimit(which, (value, value + 1 if key == "cpu_s" else value))
    sys.path.insert(0, request["folder"])
    try:
        module = __import__(request["module"])
        function = getattr(module, request["function"])
        # A tool of an agent takes its arguments by name; a function agent, one value.
        value = request["input"]
        output = function(**value) if request.get("keywords") else function(value)
        text = json.dumps({"ok": True, "output": output})
    except MemoryError:
        text = json.dumps({"ok": False, "error": "MemoryError: the tool went over its memory limit"})
    except BaseException as exc:  # the tool's own failure, reported, never a crash of the host
        text = json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]})
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
