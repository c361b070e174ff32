"""Where generated code runs: a child process under bubblewrap, never Cantata's process.

`sandbox:` is a spec feature: a `function:` agent written `sandbox:module.function` is
never imported, every call runs it here (loader.py, through `sandboxed_function`).
`runner.py` starts the child and reads its answer; `child.py` is the program the child
runs, sent to it as source text.
"""

from cantata.sandbox.runner import Limits, ToolContext, ToolRun, run_tool, sandbox_problem, sandboxed_function

__all__ = ["Limits", "ToolContext", "ToolRun", "run_tool", "sandbox_problem", "sandboxed_function"]
