"""Cantata's one error tree.

CantataError                     (exit 1, HTTP 500)
├── UserError            misuse: bad pipeline, bad arguments (exit 2, HTTP 400)
│   ├── SpecError        a pipeline file that cannot be loaded
│   ├── ConfigError      an instances config that cannot be used (only a bad config)
│   ├── SessionConflict  a session continued with a pipeline it does not belong to (409)
│   ├── SessionBusy      a turn of the session is running elsewhere and the caller would not wait (409)
│   ├── AlreadyDecided   an approval that a person has approved or denied already (409)
│   └── SandboxUnavailable  generated code must run under bubblewrap, which cannot run here (503)
├── BackendError         a model call that did not produce an answer (the agent fails, not the turn; 502)
│   ├── BackendUnavailable   an instance that does not answer, at the start of a turn or during it:
│   │   │                    connection refused, model missing (exit 2, HTTP 503)
│   │   └── CircuitOpen      an instance that failed repeatedly: its calls fail fast until a probe
│   │                        after a cool-down finds it answering (breaker.py)
│   ├── BackendTimeout       (504)
│   ├── BackendHTTPError     the server answered with an error status (`http_status`)
│   ├── BackendProtocolError the server answered something we cannot read
│   └── ToolLimitReached     an agent's tool loop hit max_steps or max_tool_calls
├── OutputInvalid        a reply that does not validate against the agent's output model (422)
│   └── OutputTruncated  a reply cut at max_tokens before it was complete (422)
├── ToolError            a tool call that failed: its message is what the model reads (502)
├── TurnAbandoned        a queued turn the workers could not run: none started it within its
│                        deadline, or each that ran it stopped (HTTP 503)
├── AwaitingApproval     a signal more than a failure: an agent's tool call waits for a person (its
│                        turn pauses, status `waiting`, and resumes once every approval is decided)
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

import json
import logging
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus

# A library logs, the application decides where to (logging's own advice for libraries):
# without this, Python's last-resort handler would print tracebacks on the CLI's stderr.
logging.getLogger("cantata").addHandler(logging.NullHandler())

# Keys shorter than this are not secrets worth hiding, and scrubbing them would mangle text.
_MIN_SECRET = 4
# A key echoed cut is still hidden down to this many characters (of any of its forms): an
# upstream's error excerpt or a log line may cut it anywhere.
_MIN_CUT = 8


class _Secrets:
    """The registered secrets in every form they may be echoed in, and one pattern finding
    the first `_MIN_CUT` characters of any form, whatever their case; a match is hidden as
    far as it goes on following the form. Rebuilt whole on registration and swapped in,
    so scrubbing (any thread) never sees it half-built."""

    def __init__(self, values: frozenset[str]) -> None:
        self.values = values
        self.forms: dict[str, list[str]] = {}  # a form's head (lower case) -> the forms (lower case)
        for value in values:
            for form in _forms(value):
                self.forms.setdefault(form[:_MIN_CUT], []).append(form)
        heads = sorted(self.forms, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(h) for h in heads), re.IGNORECASE) if heads else None

    def scrub(self, text: str) -> str:
        if self.pattern is None:
            return text
        out: list[str] = []
        done = 0
        for match in self.pattern.finditer(text):
            start = match.start()
            if start < done:
                continue  # inside what an earlier match already hid
            # (.get: a character that matches ignoring case but lower-cases otherwise finds no form)
            end = start + max((_echoed(text, start, f) for f in self.forms.get(match.group().lower(), ())), default=0)
            if end == start:
                continue
            out.append(text[done:start] + "***")
            done = end
        return "".join(out) + text[done:] if out else text


def _forms(value: str) -> set[str]:
    """How a key may be echoed: as is, URL-encoded (by a path, a query or a form), or
    JSON-escaped (`\\/` too, as some encoders write a slash), all in lower case (matched so)."""
    escaped = json.dumps(value)[1:-1]
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value), escaped, escaped.replace("/", "\\/")}
    return {form.lower() for form in forms}


def _echoed(text: str, start: int, form: str) -> int:
    """How many characters of `text` from `start` follow `form`, ignoring case."""
    n = 0
    for have, want in zip(text[start : start + len(form)], form, strict=False):
        if have.lower() != want:
            break
        n += 1
    return n


_secrets = _Secrets(frozenset())
_secrets_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Never show `value` in an error message or a log line of Cantata's again, cut,
    case-changed, URL-encoded or JSON-escaped (the config loader registers every api_key)."""
    global _secrets
    if value and len(value) >= _MIN_SECRET and value not in _secrets.values:
        with _secrets_lock:
            _secrets = _Secrets(_secrets.values | {value})


def scrub(text: str) -> str:
    """`text` with every registered secret, in any form it may be echoed in, replaced by ***."""
    return _secrets.scrub(text)


class _ScrubFilter(logging.Filter):
    """Hides the secrets in a record's message, its traceback and its stack."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _secrets.pattern is None:
            return True
        record.msg, record.args = scrub(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def get_logger(name: str) -> logging.Logger:
    """A logger of Cantata's whose records never carry a registered secret (a filter on a
    logger is not inherited by its children, so each logger Cantata logs on gets one)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, _ScrubFilter) for f in logger.filters):
        logger.addFilter(_ScrubFilter())
    return logger


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


class ToolLimitReached(BackendError):
    """A tool loop ended without a final answer: it reached the agent's max_steps or
    max_tool_calls. Not retried: the same conversation would reach it again."""


class ToolError(CantataError):
    """A tool call that failed (bad arguments, its own error, its timeout): the message is
    given to the model as the call's result, so it says what went wrong in a line, with
    nothing of Cantata's internals."""

    status = 502


class AwaitingApproval(CantataError):
    """An agent's tool loop reached calls that a person must approve first (tool_loop.py):
    the agent stops without an entry, its turn pauses, and resumes when they are decided.
    Not an agent failure: nothing catches it as one (it is no BackendError)."""

    def __init__(self, message: str, approvals: list[int] | None = None) -> None:
        super().__init__(message)
        self.approvals = approvals or []


class AlreadyDecided(UserError):
    """An approval asked to be decided a second time."""

    status = 409


class OutputInvalid(CantataError):
    status = 422


class OutputTruncated(OutputInvalid):
    """The model hit max_tokens before its reply was complete: raise the agent's max_tokens.
    Never repaired, since asking for a fix would be cut at the same length."""


class TurnAbandoned(CantataError):
    """The queue gave up on a turn (turn_queue.py): no worker started it within its deadline,
    or it was taken over from stopped workers as often as allowed and its worker stopped again.
    The turn is stored failed, with this reason on its final event."""

    status = 503


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
