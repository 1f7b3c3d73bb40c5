"""Acceptance suite: every example and scenario of the design, in Chinese and in English, through the
deployed HTTP handlers (API Gateway events, JWT tenancy) over moto's DynamoDB and SQS, offline LLM.

The fixtures are the integration suite's (`api` calls the real Lambda handlers).
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from moto.dynamodb import models as moto_dynamodb

from tests.integration.conftest import LambdaApi, api, lambda_env  # noqa: F401

# The bundled embedder runs on OpenMP. With one thread per process it never waits at a barrier for a
# thread another process has preempted: on a busy machine that wait made each save take a second.
# Embeddings are the same; set OMP_NUM_THREADS yourself to measure with more threads.
os.environ.setdefault("OMP_NUM_THREADS", "1")


_TRANSACTIONS = threading.Lock()


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
    yield
