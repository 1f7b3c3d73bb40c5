"""Small helpers shared by the acceptance and integration tests: HTTP calls in the API's own vocabulary."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from typing import Any

import boto3

from agent_memory.settings import get_settings
from tests.integration.conftest import reset_containers

INJECT = "/v1/context/inject"
# A first turn that states eight profile fields.
SELF_INTRODUCTION = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"


def user_path(user: str) -> str:
    return f"/v1/users/{user}"


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def ok(response: Any, status: int = 200) -> Any:
    assert response.status == status, (response.status, response.body)
    return response.body


def extract(api: Any, user: str, message: str, *, assistant: str = "", existing: dict[str, Any] | None = None,
            conversation: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"user_message": message, "assistant_message": assistant}
    if existing is not None:
        body["existing_info"] = existing
    if conversation:
        body["conversation_id"] = conversation
    return ok(api.call("POST", f"{user_path(user)}/memories/extract", body))  # type: ignore[no-any-return]


def save(api: Any, user: str, memory_type: str, content: str, **extra: Any) -> dict[str, Any]:
    """A save in the save_user_memory tool's shape (memoryType, content, optional category)."""
    response = api.call("POST", f"{user_path(user)}/memories", {"memoryType": memory_type, "content": content, **extra})
    assert response.status in (200, 201), (response.status, response.body)
    return response.body  # type: ignore[no-any-return]


def save_many(api: Any, user: str, memories: list[dict[str, Any]]) -> list[str]:
    body = ok(api.call("POST", f"{user_path(user)}/memories/batch", {"memories": memories}), 201)
    return body["memory_keys"]  # type: ignore[no-any-return]


def current_memories(api: Any, user: str) -> list[dict[str, Any]]:
    return ok(api.call("GET", f"{user_path(user)}/memories", query="limit=100"))["items"]  # type: ignore[no-any-return]


def memories_of(api, tenant: str = "acme", user: str = "u-1001") -> list[dict[str, Any]]:
    response = api.call("GET", f"/v1/users/{user}/memories", tenant=tenant, query="limit=100")
    assert response.status == 200
    return response.body["items"]


def load(api: Any, user: str, query: str, limit: int = 20) -> dict[str, Any]:
    return ok(api.call("POST", f"{user_path(user)}/context/load", {"query": query, "limit": limit}))  # type: ignore[no-any-return]


def summarize(api: Any, user: str) -> dict[str, Any]:
    return ok(api.call("POST", f"{user_path(user)}/profile/summarize", {"action": "summarize"}))  # type: ignore[no-any-return]


def search(api: Any, user: str, **body: Any) -> dict[str, Any]:
    return ok(api.call("POST", f"{user_path(user)}/memories/search", body))  # type: ignore[no-any-return]


def recall(api: Any, user: str, **body: Any) -> dict[str, Any]:
    return ok(api.call("POST", f"{user_path(user)}/memories/recall", body))  # type: ignore[no-any-return]


def inject(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    return ok(api.call("POST", INJECT, body))  # type: ignore[no-any-return]


def context_text(result: dict[str, Any]) -> str:
    """The injected context: the leading context message of the pair placement."""
    first = result["messages"][0]
    assert first["role"] == "user" and isinstance(first["content"], str)
    return first["content"]  # type: ignore[no-any-return]


def block_body(context: str, block_type: str) -> str:
    found = re.search(rf"<{block_type}>\n(.*?)\n</{block_type}>", context, re.S)
    assert found, f"<{block_type}> not in the context:\n{context}"
    return found.group(1)


def block_info(result: dict[str, Any], block_type: str) -> dict[str, Any]:
    return next(b for b in result["blocks"] if b["type"] == block_type)


def memory_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("- [")]


_changed_settings = False


def configure(monkeypatch: Any, **env: str) -> None:
    """Deployment settings as environment variables; the next request builds its services with them
    (and the next test gets the default ones again)."""
    global _changed_settings
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reset_containers()
    _changed_settings = True


def settings_changed() -> bool:
    """Whether this test changed the settings (and clears the mark)."""
    global _changed_settings
    changed, _changed_settings = _changed_settings, False
    return changed






def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def days_ago(days: float) -> str:
    return iso(datetime.now(UTC) - timedelta(days=days))


def at(week: date, day: int, hour: int, minute: int = 0) -> str:
    return datetime.combine(week + timedelta(days=day), clock(hour, minute), tzinfo=UTC).isoformat()


# ---- queues: what Lambda's SQS event sources do, by hand ---------------------------------------------

def _sqs() -> Any:
    return boto3.client("sqs", region_name="us-east-1")


def _event(messages: list[dict[str, Any]], queue: str) -> dict[str, Any]:
    return {"Records": [{
        "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "0", "SenderId": "local",
                       "ApproximateFirstReceiveTimestamp": "0"},
        "messageAttributes": {}, "md5OfBody": m["MD5OfBody"], "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:us-east-1:000000000000:{queue}", "awsRegion": "us-east-1",
    } for m in messages]}


def drain(api: Any, queue_url: str, function: str, queue: str, *, batch: int = 10, rounds: int = 50,
          strict: bool = True) -> None:
    """Deliver every queued message to `function` and delete it; `strict`: no message may fail."""
    for _ in range(rounds):
        messages = _sqs().receive_message(QueueUrl=queue_url, MaxNumberOfMessages=batch,
                                          VisibilityTimeout=600).get("Messages")
        if not messages:
            return
        result = api.functions.invoke(function, _event(messages, queue))
        failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
        assert not (strict and failed), result
        for m in messages:
            _sqs().delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
    raise AssertionError(f"{queue} did not drain")


def run_log_extractions(api: Any) -> None:
    drain(api, get_settings().log_extraction_queue_url, "ExtractWorkerFunction", "LogExtractionQueue")


def run_weekly_rollup(api: Any, when: datetime | None = None) -> dict[str, Any]:
    """The Monday schedule fires, then the worker takes the shard and scope tasks."""
    event = {"source": "aws.scheduler", "time": iso(when or datetime.now(UTC))}
    plan: dict[str, Any] = api.functions.invoke("RollupFunction", event)
    drain(api, get_settings().rollup_queue_url, "RollupWorkerFunction", "RollupQueue", batch=5)
    return plan


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
