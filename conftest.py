"""What holds for every test in the repository (tests/, and the tests beside the benchmarks, the client and the
build tools): none reaches AWS or Anthropic."""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from moto.dynamodb import models as moto_dynamodb

_TRANSACTIONS = threading.RLock()


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach AWS: fake credentials, a fixed region, no endpoint from the developer's shell."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "ANTHROPIC_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


@pytest.fixture(autouse=True)
def _one_table_copy_per_transaction(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto backs up the whole table once for every item of a TransactWriteItems call (a save is one
    transaction of several items); the backups are identical, taken before anything is written, and only
    restored if the transaction fails. One backup per table and call keeps that rollback and makes the
    suite several times faster."""
    original = moto_dynamodb.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        backups: dict[int, Any] = {}

        def deepcopy(value: Any, memo: Any = None) -> Any:
            if isinstance(value, moto_dynamodb.Table):
                if id(value) not in backups:
                    backups[id(value)] = copy.deepcopy(value, memo)
                return backups[id(value)]
            return copy.deepcopy(value, memo)

        with _TRANSACTIONS:
            moto_dynamodb.copy = SimpleNamespace(deepcopy=deepcopy)  # type: ignore[assignment]
            try:
                original(self, transact_items)
            finally:
                moto_dynamodb.copy = copy

    monkeypatch.setattr(moto_dynamodb.DynamoDBBackend, "transact_write_items", transact_write_items)
    # The backup iterates the table's items: a single write from another thread (the index's snapshot writer)
    # in the middle of it fails the copy with "dictionary changed size during iteration". DynamoDB serializes
    # these; moto does not, so the writes take the transactions' lock. So do the reads that iterate a table's
    # items (a query or scan meeting another thread's write fails the same way).
    for name in ("put_item", "update_item", "delete_item", "query", "scan"):
        write = getattr(moto_dynamodb.DynamoDBBackend, name)
        monkeypatch.setattr(moto_dynamodb.DynamoDBBackend, name, _serialized(write))
    yield


def _serialized(write: Callable[..., Any]) -> Callable[..., Any]:
    def serialized(*args: Any, **kwargs: Any) -> Any:
        with _TRANSACTIONS:
            return write(*args, **kwargs)
    return serialized


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
