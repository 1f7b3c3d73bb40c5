from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from agent_memory.bootstrap import get_access_stats, get_rollup_scheduler, get_rollup_worker, get_services
from agent_memory.settings import get_settings
from local.runtime import LocalFunctions, create_local_resources, http_api_event, local_environment, match_route


@dataclass
class ApiResponse:
    status: int
    headers: dict[str, str]
    body: Any


class LambdaApi:
    """Calls the real handlers with API Gateway HTTP API events, as deployed (JWT tenancy)."""

    def __init__(self, functions: LocalFunctions) -> None:
        self.functions = functions

    def call(self, method: str, path: str, body: Any = None, *, tenant: str | None = "acme", query: str = "",
             raw_body: bytes | None = None, claims: dict[str, str] | None = None,
             headers: dict[str, str] | None = None) -> ApiResponse:
        """As the service `tenant` (no token at all when None), or as a token with exactly these `claims`."""
        route, params = match_route(method, path)
        payload = raw_body if raw_body is not None else (
            json.dumps(body, ensure_ascii=False).encode() if body is not None else None)
        event = http_api_event(route=route, path_parameters=params, method=method, path=path, query=query,
                               headers={"content-type": "application/json", **(headers or {})}, body=payload)
        if claims is None and tenant is not None:
            claims = {"sub": "svc", "tenant_id": tenant}
        if claims is not None:
            event["requestContext"]["authorizer"] = {"jwt": {"claims": claims}}
        result = self.functions.invoke(route.function, event)
        headers = {k.lower(): v for k, v in (result.get("headers") or {}).items()}
        text = result.get("body") or ""
        return ApiResponse(result["statusCode"], headers, json.loads(text) if text else None)


def deployed_environment(queues: dict[str, str]) -> dict[str, str]:
    env = local_environment(queues=queues)
    env["TENANT_SOURCE"] = "jwt"  # as in template.yaml: the tenant comes from the authorizer
    return env


def reset_containers() -> None:
    get_settings.cache_clear()
    get_services.cache_clear()
    get_rollup_scheduler.cache_clear()
    get_access_stats.cache_clear()
    get_rollup_worker.cache_clear()


@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch, dynamodb_client: Any) -> Iterator[Any]:
    queues = create_local_resources(dynamodb_client, boto3.client("sqs", region_name="us-east-1"))
    for name, value in deployed_environment(queues).items():
        monkeypatch.setenv(name, value)
    reset_containers()
    yield dynamodb_client
    reset_containers()


@pytest.fixture
def api(lambda_env: Any) -> LambdaApi:
    return LambdaApi(LocalFunctions())


@pytest.fixture
def end_user_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tokens are end users' (TOKEN_KIND=end_user): each reaches its own user only."""
    monkeypatch.setenv("TOKEN_KIND", "end_user")
    reset_containers()
    yield
    reset_containers()
