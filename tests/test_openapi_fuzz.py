"""schemathesis (v4, its pytest integration) against the app in process, with every check on:
each operation of /openapi.json gets its examples, its coverage cases (wrong methods, missing
and malformed parameters, no key) and fuzzed requests, valid and invalid, with an API key in
force; none may get a 5xx or a status, header or body the document does not declare."""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from tests.helpers.server_app import make_app, new_key

# Built at import, as schemathesis' pytest integration wants its schema; nothing runs until the
# first request starts the app's lifespan (the scripted instance loads no model).
FOLDER = Path(tempfile.mkdtemp(prefix="cantata-openapi-"))
atexit.register(shutil.rmtree, FOLDER, True)
(FOLDER / "instances.yaml").write_text("instances:\n  - name: fast\n    backend: scripted\n    latency_s: 0\n")
APP = make_app(FOLDER / "instances.yaml", FOLDER / "home")
CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {"enabled": True},
        "operations": [
            # A plan is computed from names the schema cannot list (catalogue models, what fits
            # on the hardware): one that cannot be made from valid-looking input is a 400.
            {"include-path": "/api/plan", "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", 400]}}}
        ],
    }
)
schema = schemathesis.openapi.from_dict(APP.openapi(), config=CONFIG)
schema.app = APP


@schema.auth()
class ApiKey:
    """A key of an ordinary user, made on first use (the app's key ring is in its home)."""

    key: str | None = None

    def get(self, case: schemathesis.Case, context: Any) -> str:
        if ApiKey.key is None:
            ApiKey.key = asyncio.run(new_key(FOLDER / "home", "ann"))
        return ApiKey.key

    def set(self, case: schemathesis.Case, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_answers_as_its_document_says(case: schemathesis.Case) -> None:
    if case.path == "/api/events" and case.method == "GET":
        case.query = {**(case.query or {}), "follow": "false"}  # the live tail never ends: only what is stored
    case.call_and_validate(timeout=30)
