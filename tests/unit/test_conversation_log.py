"""The conversation log's service, request model and extraction queue, over fakes (no sockets)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from pydantic import ValidationError

from agent_memory.adapters.log_extraction import SqsExtractionQueue
from agent_memory.adapters.sqs_batches import MAX_ENTRIES
from agent_memory.api.log import AppendMessagesRequest, LogSearchRequest, append_to_log, search_log
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.domain.tiers.memory_layers import EmbeddingJob
from agent_memory.errors import InvalidInput, Throttled
from agent_memory.services.conversation_log import ConversationLogService, ExtractionJob
from tests.fakes.layer_store import FakeLayerStore
from tests.fakes.sqs import FakeSqs

NOW = datetime(2026, 2, 4, 12, 0, tzinfo=UTC)  # a Wednesday
SCOPE = ScopeRef(tenant_id="acme", user_id="project/p-1")


class FakeQueue:
    def __init__(self, refuse: set[str] | None = None, *, refuse_embeddings: bool = False) -> None:
        self.jobs: list[ExtractionJob] = []
        self.embeddings: list[EmbeddingJob] = []
        self.refuse = refuse or set()
        self.refuse_embeddings = refuse_embeddings

    def enqueue(self, jobs: list[ExtractionJob]) -> list[str]:
        self.jobs += jobs
        return [j.message_id for j in jobs if j.user_message in self.refuse]

    def enqueue_embedding(self, job: EmbeddingJob) -> bool:
        if self.refuse_embeddings:
            return False
        self.embeddings.append(job)
        return True


class FakeEmbedder:
    """Vectors from the words' hashes: same text, same vector; one call per batch is counted."""

    model_id = "fake-embedder"
    dimension = 8

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in text.lower().split():
            vector[hash(word) % self.dimension] += 1.0
        return vector / (np.linalg.norm(vector) or 1.0)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


def service(layers: Any = None, queue: Any = None, embedder: Any = None, ttl_days: int = 30) -> ConversationLogService:
    return ConversationLogService(layers=layers if layers is not None else FakeLayerStore(), embedder=lambda: embedder,
                                  queue=lambda: queue, ttl_days=ttl_days, timezone=ZoneInfo("Asia/Shanghai"),
                                  clock=lambda: NOW)


def request(data: dict[str, Any]) -> AppendMessagesRequest:
    return AppendMessagesRequest.model_validate(data)


def test_given_one_message_or_a_batch_then_both_parse_to_a_list_and_errors_name_fields_as_sent():
    assert len(request({"role": "user", "content": "hi", "extract": True}).messages) == 1
    assert len(request({"messages": [{"role": "user", "content": "hi"}] * 3}).messages) == 3

    with pytest.raises(ValidationError) as single:
        request({"role": "bot"})
    with pytest.raises(ValidationError) as batch:
        request({"messages": [{"role": "bot", "content": "x"}]})

    assert {e["loc"] for e in single.value.errors()} == {("role",), ("content",)}
    assert {e["loc"] for e in batch.value.errors()} == {("messages", 0, "role")}


def test_given_a_batch_when_appended_then_one_embedding_call_one_write_and_weeks_in_the_rollup_timezone():
    layers, embedder = FakeLayerStore(), FakeEmbedder()
    sunday_night_utc = datetime(2026, 2, 1, 17, 0, tzinfo=UTC)  # already Monday 01:00 in Shanghai

    result = append_to_log(service(layers, embedder=embedder), SCOPE, "c1", request({"messages": [
        {"role": "user", "content": "first", "createdAt": "2026-01-30T10:00:00Z"},
        {"role": "assistant", "content": "second", "createdAt": sunday_night_utc.isoformat()},
        {"role": "user", "content": "third"},
    ]}))

    assert embedder.batches == [["first", "second", "third"]]
    assert layers.active_weeks(SCOPE) == {date(2026, 1, 26), date(2026, 2, 2)}
    logged = layers.log_messages(SCOPE, now=NOW)
    assert [m.embedding_model for m in logged] == ["fake-embedder"] * 3
    assert np.allclose(decode_vector(logged[0].embedding or b""), embedder._vector("first"), atol=1e-3)
    assert logged[2].created_at == NOW and result.messages[2].expires_at == NOW + timedelta(days=30)
    assert result.expires_at == datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    assert result.stored_count == 3 and result.message_ids == [m.message_id for m in logged]


def test_given_a_work_queue_then_messages_are_stored_at_once_and_embedded_by_the_worker():
    layers, embedder, queue = FakeLayerStore(), FakeEmbedder(), FakeQueue()
    log = service(layers, queue=queue, embedder=embedder)

    append_to_log(log, SCOPE, "c1", request({"messages": [{"role": "user", "content": "first"},
                                                  {"role": "assistant", "content": "second"}]}))

    assert embedder.batches == [] and [m.embedding for m in layers.log_messages(SCOPE, now=NOW)] == [None, None]
    [job] = queue.embeddings
    assert log.embed_logged(job) == 2
    assert log.embed_logged(job) == 0  # a redelivery: already embedded, one read
    logged = layers.log_messages(SCOPE, now=NOW)
    assert [m.embedding_model for m in logged] == ["fake-embedder"] * 2
    assert np.allclose(decode_vector(logged[1].embedding or b""), embedder._vector("second"), atol=1e-3)


def test_given_the_queue_refuses_the_embedding_then_the_append_embeds_itself():
    layers, embedder = FakeLayerStore(), FakeEmbedder()

    append_to_log(service(layers, queue=FakeQueue(refuse_embeddings=True), embedder=embedder),
                    SCOPE, "c1", request({"role": "user", "content": "first"}))

    assert [m.embedding_model for m in layers.log_messages(SCOPE, now=NOW)] == ["fake-embedder"]


def test_a_message_gone_before_its_embedding_is_not_written_back():
    layers, embedder, queue = FakeLayerStore(), FakeEmbedder(), FakeQueue()
    log = service(layers, queue=queue, embedder=embedder)
    append_to_log(log, SCOPE, "c1", request({"role": "user", "content": "first"}))
    layers.delete_expired_log(SCOPE, NOW + timedelta(days=31))

    assert log.embed_logged(queue.embeddings[0]) == 0
    assert layers.log_messages(SCOPE, now=NOW) == []


def test_given_extract_when_appended_then_user_messages_are_queued_with_the_assistant_message_before_them():
    queue = FakeQueue()

    result = append_to_log(service(queue=queue), SCOPE, "c1", request({"extract": True, "messages": [
        {"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"}, {"role": "user", "content": "u3"},
    ]}))

    assert [(j.user_message, j.assistant_message) for j in queue.jobs] == [("u1", ""), ("u2", "a1"), ("u3", "a1")]
    assert {j.scope_id for j in queue.jobs} == {"project/p-1"} and queue.jobs[0].tenant_id == "acme"
    assert result.queued_extractions == [result.message_ids[i] for i in (0, 2, 3)]


def test_given_the_store_fails_when_appended_then_nothing_is_queued():
    queue = FakeQueue()

    with pytest.raises(Throttled):
        append_to_log(service(FakeLayerStore(fail=Throttled("slow down")), queue=queue),
                        SCOPE, "c1", request({"role": "user", "content": "x", "extract": True}))

    assert queue.jobs == []


def test_given_sqs_refuses_a_job_when_appended_then_the_message_is_stored_and_reported_unqueued():
    layers = FakeLayerStore()

    result = append_to_log(service(layers, queue=FakeQueue(refuse={"refused"})), SCOPE, "c1", request({
        "extract": True, "messages": [{"role": "user", "content": "refused"}, {"role": "user", "content": "ok"}]}))

    assert len(layers.log_messages(SCOPE, now=NOW)) == 2
    assert result.failed_extractions == [result.message_ids[0]]
    assert result.queued_extractions == [result.message_ids[1]]


@pytest.mark.parametrize(("data", "field"), [
    ({"role": "user", "content": "x", "createdAt": "2026-02-04T12:06:00Z"}, "createdAt"),  # beyond the skew
    ({"role": "user", "content": "x", "createdAt": "2026-01-05T12:00:00Z"}, "createdAt"),  # exactly expired
    ({"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y", "messageId": "m1"}]},
     "messages.1.createdAt"),
])
def test_given_times_the_clock_refuses_when_appended_then_invalid_input_names_the_field(data, field):
    layers = FakeLayerStore()

    with pytest.raises(InvalidInput) as raised:
        append_to_log(service(layers), SCOPE, "c1", request(data))

    assert raised.value.details[0]["field"] == field and layers.log_messages(SCOPE, now=NOW) == []


def test_given_a_small_clock_skew_when_appended_then_it_is_accepted():
    result = append_to_log(service(), SCOPE, "c1", request({"role": "user", "content": "x",
                                                    "createdAt": "2026-02-04T12:04:00Z"}))
    assert result.stored_count == 1


def test_given_no_queue_when_extract_is_asked_then_invalid_input_names_extract():
    with pytest.raises(InvalidInput) as raised:
        append_to_log(service(queue=None), SCOPE, "c1", request({"role": "user", "content": "x", "extract": True}))
    assert raised.value.details[0]["field"] == "extract"


def test_given_logged_messages_when_searched_then_hybrid_similarity_in_unit_range_and_filters_apply():
    embedder = FakeEmbedder()
    log = service(embedder=embedder)
    append_to_log(log, SCOPE, "c1", request({"messages": [
        {"role": "user", "content": "the site visit is on monday", "intent": "schedule"},
        {"role": "assistant", "content": "noted the site visit"},
        {"role": "user", "content": "筛选失败一例"},
    ]}))

    found = search_log(log, SCOPE, LogSearchRequest(query="site visit monday"))
    users_only = search_log(log, SCOPE, LogSearchRequest(query="site visit", role="user"))
    by_intent = search_log(log, SCOPE, LogSearchRequest(query="site visit", intent="SCHEDULE"))

    assert found.results[0].content == "the site visit is on monday"
    assert all(0.0 <= hit.similarity <= 1.0 for hit in found.results)
    assert {h.role for h in users_only.results} == {"user"}
    assert [h.content for h in by_intent.results] == ["the site visit is on monday"]
    assert search_log(log, SCOPE, LogSearchRequest(query="site", conversation_id="c2")).results == []


def test_given_vectors_of_another_model_when_searched_then_they_are_ranked_lexically():
    layers = FakeLayerStore()
    append_to_log(service(layers, embedder=FakeEmbedder()), SCOPE, "c1",
                    request({"role": "user", "content": "alpha beta"}))
    other = FakeEmbedder()
    other.model_id = "another-model"

    found = search_log(service(layers, embedder=other), SCOPE, LogSearchRequest(query="alpha"))

    assert [h.similarity for h in found.results] == [1.0]  # BM25 alone, normalised to the best match


# ---- the SQS producer -------------------------------------------------------------------------------

def job(index: int, text: str = "hi") -> ExtractionJob:
    return ExtractionJob(tenant_id="acme", scope_id="u-1", conversation_id="c1", message_id=f"m-{index}",
                         user_message=text)


def test_given_many_or_large_jobs_when_queued_then_batches_respect_sqs_limits():
    sqs = FakeSqs()
    jobs = [job(i) for i in range(23)] + [job(100 + i, "字" * 30_000) for i in range(4)]

    assert SqsExtractionQueue(queue_url="q", client=sqs).enqueue(jobs) == []

    assert [len(c) for c in sqs.calls] == [MAX_ENTRIES, MAX_ENTRIES, 3 + 2, 2]  # two 90 KB jobs per call
    assert all(sum(len(e["MessageBody"].encode()) for e in c) <= 200 * 1024 for c in sqs.calls)
    assert sorted(json.loads(e["MessageBody"])["message_id"] for c in sqs.calls for e in c) == sorted(
        j.message_id for j in jobs)


def test_given_sqs_fails_or_refuses_when_queued_then_the_unqueued_message_ids_are_returned():
    jobs = [job(i) for i in range(12)]

    down = SqsExtractionQueue(queue_url="q", client=FakeSqs(fail_calls=1)).enqueue(jobs)
    refused = SqsExtractionQueue(queue_url="q", client=FakeSqs(refuse_ids={"3"})).enqueue(jobs)

    assert down == [f"m-{i}" for i in range(10)]
    assert refused == ["m-3"]


def test_an_embedding_job_is_one_sqs_message_and_a_send_failure_is_reported_not_raised():
    job = EmbeddingJob(tenant_id="acme", scope_id="project/p-1", messages=[
        {"conversation_id": "c1", "message_id": "m-1", "created_at": NOW}])
    sqs = FakeSqs()

    assert SqsExtractionQueue(queue_url="q", client=sqs).enqueue_embedding(job) is True
    assert EmbeddingJob.model_validate_json(sqs.bodies[0][0]) == job
    assert SqsExtractionQueue(queue_url="q", client=FakeSqs(fail_calls=1)).enqueue_embedding(job) is False


# ---- dates at the edges of the representable range ---------------------------------------------------

@pytest.mark.parametrize(("data", "field"), [
    ({"role": "user", "content": "x", "createdAt": "9999-12-31T00:00:00Z"}, "createdAt"),
    ({"role": "user", "content": "x", "createdAt": "9999-12-31T23:59:59-01:00"}, "createdAt"),
    ({"role": "user", "content": "x", "createdAt": "0001-01-01T00:00:00+01:00"}, "createdAt"),
    ({"messages": [{"role": "user", "content": "x", "createdAt": "9999-12-31T00:00:00Z"}]}, "messages.0.createdAt"),
])
def test_given_a_created_at_past_the_dates_the_log_can_keep_then_the_request_names_it(data, field):
    with pytest.raises(ValidationError) as raised:
        request(data)

    assert ".".join(str(p) for p in raised.value.errors()[0]["loc"]) == field


@pytest.mark.parametrize("time_range", [
    ["0001-01-01T00:00:00+01:00", "2026-02-04T00:00:00Z"],
    ["2026-02-01T00:00:00Z", "9999-12-31T23:59:59-01:00"],
])
def test_given_a_time_range_end_outside_the_representable_dates_then_the_search_request_names_it(time_range):
    with pytest.raises(ValidationError) as raised:
        LogSearchRequest.model_validate({"query": "x", "timeRange": time_range})

    error = raised.value.errors()[0]
    assert error["loc"][0] == "timeRange" and "representable range" in error["msg"]


def test_given_a_time_range_ending_at_the_last_representable_instant_then_the_search_answers():
    layers = FakeLayerStore()
    append_to_log(service(layers), SCOPE, "c1", request({"role": "user", "content": "签证材料已提交"}))

    found = search_log(service(layers), SCOPE, LogSearchRequest.model_validate(
        {"query": "签证", "timeRange": ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"]}))

    assert [hit.content for hit in found.results] == ["签证材料已提交"]
