"""An SQS client's sends, recorded, with scripted failures."""

from __future__ import annotations

from typing import Any


class FakeSqs:
    """SendMessageBatch of an SQS client: records each call's entries; can be unreachable for the first
    `fail_calls` calls, refuse some entry ids on every call (`refuse_ids`) or on the first call only
    (`refuse_once`), as a sender's or the service's fault."""

    def __init__(self, *, fail_calls: int = 0, refuse_ids: set[str] | None = None,
                 refuse_once: set[str] | None = None, sender_fault: bool = False) -> None:
        self.calls: list[list[dict[str, str]]] = []
        self._fail_calls = fail_calls
        self._refuse = set(refuse_ids or ())
        self._refuse_once = set(refuse_once or ())
        self._sender_fault = sender_fault

    @property
    def bodies(self) -> list[list[str]]:
        return [[entry["MessageBody"] for entry in call] for call in self.calls]

    def send_message(self, *, QueueUrl: str, MessageBody: str) -> dict[str, Any]:
        self.calls.append([{"Id": "0", "MessageBody": MessageBody}])
        if len(self.calls) <= self._fail_calls:
            raise ConnectionError("SQS unreachable")
        return {"MessageId": f"m-{len(self.calls)}"}

    def send_message_batch(self, *, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append(Entries)
        if len(self.calls) <= self._fail_calls:
            raise ConnectionError("SQS unreachable")
        refused = self._refuse | self._refuse_once
        self._refuse_once = set()
        failed = [{"Id": e["Id"], "Code": "InternalError", "SenderFault": self._sender_fault}
                  for e in Entries if e["Id"] in refused]
        return {"Successful": [{"Id": e["Id"]} for e in Entries if e["Id"] not in refused], "Failed": failed}
