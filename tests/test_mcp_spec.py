"""An MCP server's spec: checked when a pipeline loads, with nothing read from the environment."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from cantata.errors import ToolError, scrub
from cantata.mcp_spec import McpServerSpec


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"command": "x", "url": "http://h/mcp"},
        {"url": "ftp://h/mcp"},
        {"url": "http://h/mcp", "env": ["A"]},
        {"command": "x", "headers": {"A": "b"}},
        {"command": "x", "env": ["not a name"]},
        {"command": "x", "timeout_s": 0},
        {"command": "x", "colour": "blue"},
    ],
)
def test_a_bad_spec_is_refused_at_load(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        McpServerSpec(**spec)


def test_the_spec_names_its_server() -> None:
    assert McpServerSpec(command="/usr/bin/my-server").label == "my-server"
    assert McpServerSpec(url="http://127.0.0.1:9/mcp").label == "127.0.0.1:9"
    assert McpServerSpec(name="docs", url="http://h/mcp").label == "docs"


def test_headers_read_the_environment_when_the_server_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = McpServerSpec(url="http://h/mcp", headers={"Authorization": "Bearer $env:MCP_SPEC_TOKEN", "X-Plain": "a"})
    monkeypatch.delenv("MCP_SPEC_TOKEN", raising=False)
    with pytest.raises(ToolError, match=r"could not start: \$env:MCP_SPEC_TOKEN is not set"):
        spec.resolved_headers()
    monkeypatch.setenv("MCP_SPEC_TOKEN", "spec-token-8d1e")
    assert spec.resolved_headers() == {"Authorization": "Bearer spec-token-8d1e", "X-Plain": "a"}
    assert scrub("sent spec-token-8d1e") == "sent ***"  # a header's secret is never shown again


def test_include_and_exclude() -> None:
    spec = McpServerSpec(command="x", include=["a", "b"], exclude=["b"])
    assert [name for name in ("a", "b", "c") if spec.offers(name)] == ["a"]
    assert McpServerSpec(command="x", exclude=["b"]).offers("c")
