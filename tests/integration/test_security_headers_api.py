"""The headers every answer carries: JSON is never sniffed, the docs page has a content security policy and may
not be framed."""

from __future__ import annotations

import pytest

USER = "/v1/users/u-hard"


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", f"{USER}/memories", None),
    ("POST", f"{USER}/memories", {"memory_type": "FACT"}),
    ("GET", "/v1/tools", None),
    ("POST", "/v1/context/inject", {}),
])
def test_every_json_answer_says_nosniff(api, method, path, body):
    assert api.call(method, path, body).headers["x-content-type-options"] == "nosniff"


def test_the_docs_page_carries_a_content_security_policy_and_may_not_be_framed(api):
    from local.runtime import http_api_event, match_route

    route, params = match_route("GET", "/docs")
    event = http_api_event(route=route, path_parameters=params, method="GET", path="/docs", query="", headers={},
                           body=None)
    headers = {k.lower(): v for k, v in api.functions.invoke(route.function, event)["headers"].items()}

    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
