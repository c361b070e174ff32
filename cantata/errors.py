"""Cantata's one error tree.

CantataError
├── UserError            misuse: bad pipeline, bad config, bad arguments (exit 2, HTTP 400)
│   ├── SpecError        a pipeline file that cannot be loaded
│   └── ConfigError      an instances config that cannot be used
├── BackendError         a model call that did not produce an answer (the agent fails, not the turn)
│   ├── BackendUnavailable   connection refused, model missing
│   ├── BackendTimeout
│   ├── BackendHTTPError     the server answered with an error status
│   └── BackendProtocolError the server answered something we cannot read
├── OutputInvalid        a reply that does not validate against the agent's output model
├── Rejected             a pipeline's check refused a reply (the model regenerates once)
└── StoreError           the database refused a write or read

Every error carries `status` (HTTP) and `exit_code` (CLI) so the CLI and the server
report them the same way: one line, no traceback.
"""

from __future__ import annotations


class CantataError(Exception):
    status = 500
    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UserError(CantataError):
    status = 400
    exit_code = 2


class SpecError(UserError):
    """A pipeline file is invalid; the message names the file, the line and the fix."""


class ConfigError(UserError):
    """The instances config is invalid, or an instance it names cannot be used."""


class BackendError(CantataError):
    status = 502


class BackendUnavailable(BackendError):
    status = 503


class BackendTimeout(BackendError):
    status = 504


class BackendHTTPError(BackendError):
    def __init__(self, message: str, *, http_status: int) -> None:
        super().__init__(message)
        self.http_status = http_status


class BackendProtocolError(BackendError):
    pass


class OutputInvalid(CantataError):
    status = 422


class Rejected(CantataError):
    """Raised by an agent's `check` to have the model write its reply again, with this reason."""

    status = 422


class StoreError(CantataError):
    pass


class SandboxUnavailable(UserError):
    """Generated code must run under bubblewrap, and bubblewrap cannot run here."""

    status = 503


class Skip(Exception):
    """Raised by a `shortcut` or a `function` to skip its agent, with this reason: the agent
    is recorded as skipped, and agents that require it are skipped too. A signal, like
    Rejected, not an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
