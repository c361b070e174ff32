"""Cantata's one error tree.

CantataError                     (exit 1, HTTP 500)
├── UserError            misuse: bad pipeline, bad arguments (exit 2, HTTP 400)
│   ├── SpecError        a pipeline file that cannot be loaded
│   ├── ConfigError      an instances config that cannot be used (only a bad config)
│   ├── SessionConflict  a session continued with a pipeline it does not belong to (409)
│   ├── SessionBusy      a turn of the session is running elsewhere and the caller would not wait (409)
│   └── SandboxUnavailable  generated code must run under bubblewrap, which cannot run here (503)
├── BackendError         a model call that did not produce an answer (the agent fails, not the turn; 502)
│   ├── BackendUnavailable   an instance that does not answer, at the start of a turn or during it:
│   │   │                    connection refused, model missing (exit 2, HTTP 503)
│   │   └── CircuitOpen      an instance that failed repeatedly: its calls fail fast until a probe
│   │                        after a cool-down finds it answering (breaker.py)
│   ├── BackendTimeout       (504)
│   ├── BackendHTTPError     the server answered with an error status (`http_status`)
│   └── BackendProtocolError the server answered something we cannot read
├── OutputInvalid        a reply that does not validate against the agent's output model (422)
│   └── OutputTruncated  a reply cut at max_tokens before it was complete (422)
└── StoreError           the database refused a write or read
    └── StoreUnavailable the database cannot be reached or opened at all (exit 2, HTTP 503)

`Rejected` and `Skip` are not in the tree: they are signals, from a pipeline's `check` to
have the model write its reply again, and from a `function` or `shortcut` to skip its agent
(as pydantic-ai keeps `ModelRetry` apart from its errors).

Every error carries `status` (HTTP) and `exit_code` (CLI) so the CLI and the server
report them the same way: one line, no traceback. Each keeps its cause (`raise ... from
exc`) for the log, pickles (errors cross into worker and sandbox processes), and has the
registered secrets (every configured api_key) scrubbed from its message when it is built.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

# A library logs, the application decides where to (logging's own advice for libraries):
# without this, Python's last-resort handler would print tracebacks on the CLI's stderr.
logging.getLogger("cantata").addHandler(logging.NullHandler())

# Keys shorter than this are not secrets worth hiding, and scrubbing them would mangle text.
_MIN_SECRET = 4
# Longest first, so that a secret containing another is hidden whole. A tuple replaced
# whole under the lock, so that scrubbing (any thread) never sees it change mid-loop.
_secrets: tuple[str, ...] = ()
_secrets_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Never show `value` in an error message again (the config loader registers every api_key)."""
    global _secrets
    if value and len(value) >= _MIN_SECRET and value not in _secrets:
        with _secrets_lock:
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def scrub(text: str) -> str:
    """`text` with every registered secret replaced by ***."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _rebuild(cls: type[CantataError], message: str, state: dict[str, Any]) -> CantataError:
    """Unpickle without calling __init__: keyword arguments (http_status) live in `state`."""
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.message = message
    error.__dict__.update(state)
    return error


class CantataError(Exception):
    status = 500
    exit_code = 1

    def __init__(self, message: str) -> None:
        message = scrub(message)
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        state = {k: v for k, v in self.__dict__.items() if k != "message"}
        return (_rebuild, (type(self), self.message, state))


class UserError(CantataError):
    status = 400
    exit_code = 2


class SpecError(UserError):
    """A pipeline file is invalid; the message names the file, the line and the fix."""


class ConfigError(UserError):
    """The instances config is invalid (an instance that does not answer is BackendUnavailable)."""


class SessionConflict(UserError):
    """A session belongs to the pipeline that started it: its agents' outputs, memory and
    summary mean nothing to another pipeline, so continuing it with one is refused."""

    status = 409


class SessionBusy(UserError):
    """Another turn of the session is running (in this process or another): one turn at a
    time per session, so a caller that would not wait is refused."""

    status = 409


class BackendError(CantataError):
    status = 502


class BackendUnavailable(BackendError):
    """An instance that does not answer; for the CLI, like bad input: one line, exit 2."""

    status = 503
    exit_code = 2


class CircuitOpen(BackendUnavailable):
    """A call refused without being sent: its instance failed repeatedly, and is left alone
    until the breaker's cool-down ends (breaker.py)."""


class BackendTimeout(BackendError):
    status = 504


class BackendHTTPError(BackendError):
    """The server answered with an error status; `retry_after_s` is its `Retry-After`, if any."""

    def __init__(self, message: str, *, http_status: int, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.retry_after_s = retry_after_s


class BackendProtocolError(BackendError):
    pass


class OutputInvalid(CantataError):
    status = 422


class OutputTruncated(OutputInvalid):
    """The model hit max_tokens before its reply was complete: raise the agent's max_tokens.
    Never repaired, since asking for a fix would be cut at the same length."""


class StoreError(CantataError):
    pass


class StoreUnavailable(StoreError):
    """The database cannot be reached (a PostgreSQL server down, a wrong URL): for the CLI,
    like an unreachable instance, one line and exit 2; the message names the database
    without its password."""

    status = 503
    exit_code = 2


class SandboxUnavailable(UserError):
    """Generated code must run under bubblewrap, and bubblewrap cannot run here."""

    status = 503


class Rejected(Exception):
    """Raised by an agent's `check` to have the model write its reply again, with this reason.

    A signal, not an error: it never leaves the agent that raised it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class Skip(Exception):
    """Raised by a `shortcut` or a `function` to skip its agent, with this reason: the agent
    is recorded as skipped, and agents that require it are skipped too. A signal, like
    Rejected, not an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason
