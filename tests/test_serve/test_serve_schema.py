"""Property-based run of schemathesis against the service's own OpenAPI spec, over real HTTP:
generated valid and invalid requests to every operation (the chat wrapper with serve-llm's
SmolLM2 as its upstream) must never get a server error, invalid ones must be rejected, and
every response must match the documented schema, status codes and content type."""

from __future__ import annotations

import pytest
import schemathesis
from helpers import wait_ready
from hypothesis import HealthCheck, settings
from llm_helpers import serve, smollm

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.llm_server import create_llm_app
from serve.settings import ServeSettings

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api_schema(built_index):
    nli = build_attribution(AttributionConfig())
    pipeline = Pipeline(
        Components(load_config("default"), index_path=built_index, progress=False),
        attribution=nli,
    )
    with serve(create_llm_app(smollm(), "smollm2")) as upstream:
        app = create_app(pipeline, ServeSettings(upstream_url=f"{upstream}/v1", deadline_s=30))
        with serve(app) as url:
            ready = wait_ready(url, 120)
            assert ready.status_code == 200, f"the service did not get ready: {ready.text}"
            yield schemathesis.openapi.from_url(f"{url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_api_never_fails_with_a_server_error(case):
    # every check but "schema-valid requests are accepted": limits the schema cannot state
    # (batch size, text length and evidence count are server settings) answer 413 by design
    case.call_and_validate(
        timeout=120, excluded_checks=[schemathesis.checks.positive_data_acceptance]
    )
