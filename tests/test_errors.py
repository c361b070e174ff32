"""The error tree as the CLI, a server and worker processes rely on it."""

from __future__ import annotations

import pickle

import pytest

from cantata import errors
from cantata.config import InstanceConfig
from cantata.errors import BackendHTTPError, BackendUnavailable, CantataError, ConfigError, Rejected, Skip, UserError


def every_error_class() -> list[type[CantataError]]:
    found: list[type[CantataError]] = []
    pending: list[type[CantataError]] = [CantataError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        # The tree of errors.py: not the server's own HTTPError (status given per raise),
        # which is a subclass only once cantata.server is imported, i.e. depending on test order.
        pending.extend(sub for sub in cls.__subclasses__() if sub.__module__ == errors.__name__)
    return found


def build(cls: type[CantataError], message: str) -> CantataError:
    if issubclass(cls, BackendHTTPError):
        return cls(message, http_status=429)
    return cls(message)


ALL = every_error_class()


def test_the_walk_finds_the_whole_tree() -> None:
    names = {cls.__name__ for cls in ALL}
    assert {
        "SpecError",
        "ConfigError",
        "BackendUnavailable",
        "BackendHTTPError",
        "OutputTruncated",
        "StoreError",
    } <= names
    # Every class defined in errors.py that is a CantataError is reached by the walk.
    defined = {v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, CantataError)}
    assert defined <= set(ALL)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_every_error_maps_to_an_exit_code_and_an_http_status(cls: type[CantataError]) -> None:
    error = build(cls, "what went wrong")
    assert isinstance(error.exit_code, int) and error.exit_code in (1, 2)
    assert isinstance(error.status, int) and 400 <= error.status <= 599
    # Misuse exits 2 like bad input; a failure at run time is not the caller's fault (5xx or 422).
    if isinstance(error, UserError):
        assert error.exit_code == 2
        # A server that cannot sandbox: 503; a session continued with another pipeline: 409.
        assert error.status == {
            "SandboxUnavailable": 503,
            "SessionConflict": 409,
            "SessionBusy": 409,
            "AlreadyDecided": 409,
        }.get(cls.__name__, 400)
    else:
        assert error.status >= 422


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_every_error_survives_a_pickle_round_trip(cls: type[CantataError]) -> None:
    error = build(cls, "instance 'gpu1': it broke")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls
    assert str(again) == str(error) == "instance 'gpu1': it broke"
    assert (again.status, again.exit_code) == (error.status, error.exit_code)
    if isinstance(error, BackendHTTPError):
        assert isinstance(again, BackendHTTPError) and again.http_status == 429


@pytest.mark.parametrize("signal", [Rejected, Skip])
def test_signals_stay_outside_the_tree_and_pickle(signal: type[Rejected | Skip]) -> None:
    assert not issubclass(signal, CantataError)
    again = pickle.loads(pickle.dumps(signal("too long")))
    assert isinstance(again, signal) and str(again) == "too long" and again.reason == "too long"


def test_an_unreachable_instance_is_unavailable_not_a_config_error() -> None:
    assert not issubclass(BackendUnavailable, ConfigError)
    assert (BackendUnavailable.status, BackendUnavailable.exit_code) == (503, 2)


def test_configured_keys_are_scrubbed_from_every_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANTATA_TEST_KEY", "sk-from-the-environment-42")
    InstanceConfig(name="a", backend="openai", url="http://h/v1", api_key="sk-literal-key-7")
    InstanceConfig(name="b", backend="openai", url="http://h/v1", api_key="$env:CANTATA_TEST_KEY")
    for cls in ALL:
        error = build(cls, "sent sk-literal-key-7 and sk-from-the-environment-42 to http://h/v1")
        assert str(error) == "sent *** and *** to http://h/v1"
        assert "sk-" not in repr(error.args) and "sk-" not in str(pickle.loads(pickle.dumps(error)))


def test_an_error_keeps_its_cause() -> None:
    try:
        try:
            {}["missing"]
        except KeyError as exc:
            raise BackendUnavailable("instance 'x': gone") from exc
    except BackendUnavailable as caught:
        assert isinstance(caught.__cause__, KeyError)
