"""An MCP server whose tools an agent may call, as data: how to reach it (a command over
stdio, or a URL over streamable HTTP), which of its tools to offer, and their limits.

Plain data, read from a pipeline's `tools:` (`mcp:` entries) and checked when it loads;
`cantata.mcp_client` starts and talks to the server. Nothing here reads the environment
until a server is started: `$env:NAME` in a header and the names in `env` are looked up
then, so a pipeline validates on a machine that lacks the secrets.
"""

from __future__ import annotations

import os
import re
from typing import Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cantata.errors import ToolError, register_secret

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
# `$env:NAME` anywhere in a header's value: "Bearer $env:TOKEN" is the usual form.
_ENV_REFERENCE = re.compile(r"\$env:([A-Za-z_][A-Za-z0-9_]*)")


class McpServerSpec(BaseModel):
    """One MCP server. Exactly one of `command` (stdio) and `url` (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(
        None, min_length=1, description="What messages and the log call it (default: the command's or URL's name)."
    )
    command: str | None = Field(None, min_length=1, description="The program to start; it speaks MCP on stdio.")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: list[str] = Field(
        default_factory=list,
        description="The environment variables it may see, by name, besides the MCP SDK's base"
        " (HOME, LOGNAME, PATH, SHELL, TERM, USER); no other variable of Cantata's reaches it.",
    )
    url: str | None = Field(None, description="A streamable HTTP endpoint, e.g. http://127.0.0.1:8931/mcp.")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Sent with every request; `$env:NAME` in a value is replaced by that variable.",
    )
    include: list[str] | None = Field(None, description="Offer only these of its tools (default: all).")
    exclude: list[str] = Field(default_factory=list, description="Never offer these of its tools.")
    timeout_s: float = Field(30.0, gt=0, le=3600, description="Per call: past it, the call fails (a ToolError).")
    start_timeout_s: float = Field(20.0, gt=0, le=600, description="To start (or reach) the server and list its tools.")
    approve: bool = Field(False, description="Every call of its tools waits for a person's approval.")

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of `command` (stdio) and `url` (streamable HTTP)")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"url: '{self.url}' is not an http(s) URL")
            if self.args or self.env:
                raise ValueError("`args` and `env` are for a `command`; a `url` server takes `headers`")
        elif self.headers:
            raise ValueError("`headers` are for a `url`; a `command` server takes `env`")
        bad = [name for name in self.env if not re.match(ENV_NAME, name)]
        if bad:
            raise ValueError(f"env: {', '.join(map(repr, bad))} is not a variable name")
        return self

    @property
    def label(self) -> str:
        """What messages call it: its name, else its program's or host's."""
        if self.name:
            return self.name
        if self.command is not None:
            return os.path.basename(self.command)
        return urlsplit(self.url or "").netloc

    def offers(self, tool: str) -> bool:
        return (self.include is None or tool in self.include) and tool not in self.exclude

    def child_env(self) -> dict[str, str]:
        """The named variables that are set, for the server's process. Each value is a secret
        from now on, as a header's is: a variable is named here to hand the server a token, and
        a server that echoes it (on stderr, in a message) must not get it into the log."""
        found = {name: os.environ[name] for name in self.env if name in os.environ}
        for value in found.values():
            register_secret(value)
        return found

    def resolved_headers(self) -> dict[str, str]:
        """The headers with `$env:NAME` replaced; each value so read is a secret from now on
        (never shown in an error or a log line). A variable that is not set fails the start."""

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            found = os.environ.get(name)
            if found is None:
                raise ToolError(f"MCP server '{self.label}' could not start: $env:{name} is not set")
            register_secret(found)
            return found

        return {key: _ENV_REFERENCE.sub(value, raw) for key, raw in self.headers.items()}
