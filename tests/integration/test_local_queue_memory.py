"""The local queues keep a bounded memory of deleted messages: a second delete still succeeds as on SQS,
and a steady load does not grow the supervisor without end."""

from local.queues import LocalQueues, RecentHandles


def test_recent_handles_keep_only_the_newest() -> None:
    handles = RecentHandles(limit=3)
    handles.update(["a", "b", "c"])
    handles.add("d")
    assert "a" not in handles
    assert list(handles) == ["b", "c", "d"]
    handles.add("b")  # seen again: now the newest
    handles.add("e")
    assert list(handles) == ["d", "b", "e"]
    handles.discard("d")
    assert len(handles) == 2


def test_a_deleted_message_can_be_deleted_again_and_the_memory_of_it_is_bounded(tmp_path) -> None:
    queues = LocalQueues(tmp_path)
    queues.start()
    try:
        sqs = queues.client()
        url = queues.urls["AccessStatsQueue"]
        sqs.send_message(QueueUrl=url, MessageBody="one")
        handle = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"][0]["ReceiptHandle"]
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)  # SQS answers a second delete with success
        assert queues.pending()["AccessStatsQueue"] == 0
        remembered = queues._queue("AccessStatsQueue").deleted_messages
        assert isinstance(remembered, RecentHandles)
        assert handle in remembered
    finally:
        queues.stop()
