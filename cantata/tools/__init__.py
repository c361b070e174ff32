"""Tools an agent may call in its model call's loop (tool_loop.py): their one shape
(base.py), Python functions (functions.py), functions run under bubblewrap (sandboxed.py),
and the JSON a backend without native tool calls answers in (envelope.py)."""

from cantata.tools.base import Tool, ToolCall, result_text
from cantata.tools.functions import FunctionTool
from cantata.tools.sandboxed import SandboxTool

__all__ = ["FunctionTool", "SandboxTool", "Tool", "ToolCall", "result_text"]
