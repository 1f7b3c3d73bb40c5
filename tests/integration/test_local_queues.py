"""The local stack's queues: messages queued and in flight at a stop are queued again at the next start, with the
template's redrive policy."""

from __future__ import annotations

import json

from local.queues import LocalQueues

# The queues across a stop ------------------------------------------------------------------------------


def test_given_messages_queued_and_in_flight_at_a_stop_then_the_next_start_queues_them_again(tmp_path):
    queues = LocalQueues(tmp_path)
    assert queues.start() == {}
    sqs = queues.client()
    url = queues.urls["LogExtractionQueue"]
    for body in ("one", "two", "三"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)  # in flight when the stack stops
    assert queues.pending()["LogExtractionQueue"] == 3
    assert queues.save() == {"LogExtractionQueue": 3}
    queues.stop()

    again = LocalQueues(tmp_path)
    try:
        assert again.start() == {"LogExtractionQueue": 3}
        received = again.client().receive_message(QueueUrl=again.urls["LogExtractionQueue"], MaxNumberOfMessages=10)
        assert sorted(m["Body"] for m in received["Messages"]) == sorted(["one", "two", "三"])
        assert not (tmp_path / "LogExtractionQueue.jsonl").exists()
    finally:
        again.stop()


def test_the_queues_carry_the_templates_redrive_policy(tmp_path):
    queues = LocalQueues(tmp_path)
    queues.start()
    try:
        attributes = queues.client().get_queue_attributes(QueueUrl=queues.urls["LogExtractionQueue"],
                                                          AttributeNames=["All"])["Attributes"]
        assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == 3
        assert attributes["VisibilityTimeout"] == "1800"
    finally:
        queues.stop()
