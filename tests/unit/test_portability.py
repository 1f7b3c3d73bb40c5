"""Export and import of a scope over the DynamoDB adapters (moto): what a page holds, how pages follow each other,
that nothing of another scope appears, and that an import is whole, idempotent and refuses conflicts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.adapters.dynamodb.archive import DynamoScopeArchive
from agent_memory.adapters.dynamodb.memory_files import DynamoMemoryFileStore
from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.dynamodb.synonyms import DynamoSynonymStore
from agent_memory.domain.lifecycle.portable import ExportPage, ImportPage
from agent_memory.domain.memory_tool.memory_files import MemoryFile
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, LogMessage, WeeklyReport
from agent_memory.errors import Conflict, InvalidInput, PayloadTooLarge, Throttled
from agent_memory.services.portability import PortabilityService
from tests.conftest import TABLE
from tests.fakes.dynamodb_faults import ThrottlingDynamo
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.export_pages import export_all

SOURCE = ScopeRef(tenant_id="t-from", user_id="u-1")
NOW = datetime.now(UTC)


class Stores:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.memories = DynamoMemoryStore(table_name=TABLE, client=client)
        self.layers = DynamoLayerStore(table_name=TABLE, client=client)
        self.files = DynamoMemoryFileStore(table_name=TABLE, client=client)
        self.synonyms = DynamoSynonymStore(table_name=TABLE, client=client, cache_seconds=0)
        self.embedder = HashingEmbedder()
        self.service = PortabilityService(archive=lambda: DynamoScopeArchive(table_name=TABLE, client=client),
                                          synonyms=self.synonyms, embedder=lambda: self.embedder)

    def fill(self, scope: ScopeRef) -> None:
        """A user with a field superseded twice, a Chinese and an English memory, a log, hot memory, a report,
        memory-tool files and a tenant synonym."""
        for city in ("Leeds", "York", "Bath"):
            self.memories.save(scope, NewMemory(memory_type=MemoryType.FACT, content=f"Lives in {city}",
                                                field="residence"))
        self.memories.save(scope, NewMemory(memory_type=MemoryType.PREFERENCE, content="喜欢喝绿茶，不加糖"))
        self.layers.append_messages(scope, [
            LogMessage(message_id="m1", conversation_id="c1", role="user", content="我想申请高才通",
                       created_at=NOW, expires_at=NOW + timedelta(days=30)),
            LogMessage(message_id="m0", conversation_id="c1", role="user", content="long gone",
                       created_at=NOW - timedelta(days=40), expires_at=NOW - timedelta(days=10))], set())
        self.layers.put_hot(scope, HotMemoryEntry(type=HotMemoryType.STATUS, key="签证", value={"stage": 2},
                                                  created_at=NOW, updated_at=NOW))
        self.layers.put_report_if_absent(scope, WeeklyReport(week_start=NOW.date(), week_end=NOW.date(),
                                                             summary="Asked about visas", created_at=NOW))
        self.files.create(scope, MemoryFile(path="/memories/客户/notes.md", text="prefers email", created_at=NOW,
                                            updated_at=NOW))
        self.synonyms.add(scope.tenant_id, "绿茶", ["green tea"], 0.9)
        self.synonyms.add(scope.tenant_id, "unrelated", ["nothing here"], 0.8)

    def export_all(self, scope: ScopeRef) -> list[ExportPage]:
        return export_all(self.service, scope, NOW)


@pytest.fixture
def stores(dynamodb_client: Any) -> Stores:
    return Stores(dynamodb_client)


def sent(page: ExportPage) -> ImportPage:
    """The page as it crosses the wire."""
    return ImportPage.model_validate(json.loads(page.model_dump_json()))


def content(pages: list[ExportPage]) -> dict[str, Any]:
    """What the pages hold, whatever scope they came from (a version's provenance aside: an import records its
    own)."""
    merged: dict[str, list[Any]] = {}
    for page in pages:
        for section, items in page.model_dump(mode="json", exclude={"source_tenant_id", "scope", "exported_at",
                                                                    "next_cursor", "format", "version"}).items():
            merged.setdefault(section, []).extend(items)
    for record in merged.get("memories", []):
        for version in record["versions"]:
            version.pop("origin", None)
            version.pop("written_by", None)
    return merged


def test_given_a_user_then_the_export_holds_every_memory_with_its_history_and_the_rest_of_their_data(stores):
    stores.fill(SOURCE)

    (page,) = stores.export_all(SOURCE)

    chains = [[v.content for v in m.versions] for m in page.memories]
    assert chains == [["Lives in Leeds", "Lives in York", "Lives in Bath"], ["喜欢喝绿茶，不加糖"]]
    assert [v.version for v in page.memories[0].versions] == [1, 2, 3]
    assert [m.content for m in page.log] == ["我想申请高才通"]  # the expired message is not exported
    assert [(e.type, e.key, e.value) for e in page.hot_memory] == [(HotMemoryType.STATUS, "签证", {"stage": 2})]
    assert [r.summary for r in page.reports] == ["Asked about visas"]
    assert [(f.path, f.is_directory) for f in page.files] == [("/memories/客户", True),
                                                              ("/memories/客户/notes.md", False)]
    assert {(s.keyword, s.synonym) for s in page.synonyms} == {("绿茶", "green tea"), ("green tea", "绿茶")}
    assert page.next_cursor is None
    assert "embedding" not in page.model_dump_json()


def test_given_another_user_and_another_tenant_then_nothing_of_theirs_is_exported(stores):
    stores.fill(SOURCE)
    neighbour = ScopeRef(tenant_id=SOURCE.tenant_id, user_id="u-2")
    stranger = ScopeRef(tenant_id="t-other", user_id=SOURCE.user_id)
    for scope in (neighbour, stranger):
        stores.memories.save(scope, NewMemory(memory_type=MemoryType.FACT, content=f"secret of {scope.tenant_id}"))
        stores.files.create(scope, MemoryFile(path="/memories/secret.md", text="secret", created_at=NOW,
                                              updated_at=NOW))
    stores.synonyms.add("t-other", "喝绿茶", ["their tea"], 0.9)

    text = "".join(p.model_dump_json() for p in stores.export_all(SOURCE))

    assert "secret" not in text and "their tea" not in text


def test_given_an_export_imported_into_a_new_tenant_then_exporting_it_again_gives_the_same_data(stores):
    stores.fill(SOURCE)
    target = ScopeRef(tenant_id="t-to", user_id="someone-else")
    pages = stores.export_all(SOURCE)

    for page in pages:
        stores.service.import_page(target, sent(page), now=NOW)

    assert content(stores.export_all(target)) == content(pages)
    assert {v.origin for p in stores.export_all(target) for m in p.memories for v in m.versions} == {"import"}
    current = stores.memories.all_current(target)
    assert sorted(m.content for m in current) == ["Lives in Bath", "喜欢喝绿茶，不加糖"]
    assert all(m.embedding and m.embedding_model == "hashing-test" for m in current)
    bath = next(m for m in current if m.field == "residence")
    assert [m.content for m in stores.memories.history(target, bath)] == ["Lives in Leeds", "Lives in York",
                                                                          "Lives in Bath"]
    assert stores.memories.user_version(target) > 0  # caches keyed on it see the import
    assert stores.synonyms.synonyms_for("t-to", ["绿茶"]) == {"绿茶": [("green tea", 0.9)]}


def test_given_a_page_sent_twice_then_the_second_time_stores_nothing(stores):
    stores.fill(SOURCE)
    target = ScopeRef(tenant_id="t-to", user_id="u")
    (page,) = stores.export_all(SOURCE)
    first = stores.service.import_page(target, sent(page), now=NOW)
    version = stores.memories.user_version(target)
    items = stores.client.scan(TableName=TABLE)["Count"]

    again = stores.service.import_page(target, sent(page), now=NOW)

    assert first.written.memory_versions == 4 and again.written.memory_versions == 0
    assert again.skipped.memory_versions == 4 and again.skipped.memories == first.written.memories
    assert (again.written.log, again.written.hot_memory, again.written.files, again.written.synonyms) == (0, 0, 0, 0)
    assert stores.client.scan(TableName=TABLE)["Count"] == items
    assert stores.memories.user_version(target) == version


def test_given_the_target_holds_another_current_memory_of_a_field_then_the_page_is_refused_whole(stores):
    stores.fill(SOURCE)
    target = ScopeRef(tenant_id="t-to", user_id="u")
    stores.memories.save(target, NewMemory(memory_type=MemoryType.FACT, content="Lives in Paris", field="residence"))
    (page,) = stores.export_all(SOURCE)
    before = stores.client.scan(TableName=TABLE)["Count"]

    with pytest.raises(Conflict) as raised:
        stores.service.import_page(target, sent(page), now=NOW)

    assert raised.value.details == [{"field": "memories.0.versions.2.field", "type": "conflict"}]
    assert stores.client.scan(TableName=TABLE)["Count"] == before


def test_given_a_memory_key_held_with_other_content_then_the_import_names_it(stores):
    stores.fill(SOURCE)
    (page,) = stores.export_all(SOURCE)
    body = json.loads(page.model_dump_json())
    body["memories"][1]["versions"][0]["content"] = "something else"

    with pytest.raises(Conflict) as raised:
        stores.service.import_page(SOURCE, ImportPage.model_validate(body), now=NOW)

    assert raised.value.details == [{"field": "memories.1.versions.0.memory_key", "type": "conflict"}]


def test_given_a_file_whose_directory_is_neither_in_the_page_nor_stored_then_it_is_refused(stores):
    page = ImportPage.model_validate({"format": "agent-memory-export", "version": 1, "files": [
        {"path": "/memories/a/b.md", "text": "x", "created_at": "2026-01-05T10:00:00Z"}]})

    with pytest.raises(InvalidInput) as raised:
        stores.service.import_page(SOURCE, page, now=NOW)

    assert raised.value.details == [{"field": "files.0.path"}]
    assert stores.client.scan(TableName=TABLE)["Count"] == 0


def test_given_a_page_of_more_writes_than_one_transaction_then_it_is_refused_before_anything_is_read(stores):
    memories = [{"versions": [{"memory_key": f"mem_01kd00000000000000000{i:05d}", "memory_type": "FACT",
                               "content": f"fact {i}", "importance": 50, "created_at": "2026-01-05T10:00:00Z",
                               "updated_at": "2026-01-05T10:00:00Z", "valid_from": "2026-01-05T10:00:00Z"}]}
                for i in range(50)]  # each current: the memory and its content marker
    page = ImportPage.model_validate({"format": "agent-memory-export", "version": 1, "memories": memories})

    with pytest.raises(PayloadTooLarge):
        stores.service.import_page(SOURCE, page, now=NOW)


def test_given_a_deleted_current_memory_then_its_history_is_still_exported_once(stores):
    stores.memories.save(SOURCE, NewMemory(memory_type=MemoryType.FACT, content="Lives in Leeds", field="residence"))
    york = stores.memories.save(SOURCE, NewMemory(memory_type=MemoryType.FACT, content="Lives in York",
                                                  field="residence"))
    stores.memories.delete(SOURCE, york.memory.memory_key)
    stores.memories.save(SOURCE, NewMemory(memory_type=MemoryType.FACT, content="Lives in Bath", field="residence"))

    (page,) = stores.export_all(SOURCE)

    # The deleted version stays the last of its chain (kept for as-of reads), marked deleted.
    assert [[v.content for v in m.versions] for m in page.memories] == [["Lives in Leeds", "Lives in York"],
                                                                        ["Lives in Bath"]]
    assert page.memories[0].versions[0].superseded_by == york.memory.memory_key
    deleted = page.memories[0].versions[1]
    assert deleted.deleted_at is not None and deleted.superseded_at == deleted.deleted_at
    target = ScopeRef(tenant_id="t-to", user_id="after-a-delete")
    stores.service.import_page(target, sent(page), now=NOW)
    assert content(stores.export_all(target)) == content([page])
    assert [m.content for m in stores.memories.all_current(target)] == ["Lives in Bath"]


def test_given_two_current_memories_of_the_same_content_in_a_page_then_the_second_is_named(stores):
    versions = [{"versions": [{"memory_key": f"mem_01kd000000000000000000000{i}", "memory_type": "FACT",
                               "content": text, "importance": 50, "created_at": "2026-01-05T10:00:00Z",
                               "updated_at": "2026-01-05T10:00:00Z", "valid_from": "2026-01-05T10:00:00Z"}]}
                for i, text in enumerate(["Likes tea", "likes  tea!"])]
    page = ImportPage.model_validate({"format": "agent-memory-export", "version": 1, "memories": versions})

    with pytest.raises(InvalidInput) as raised:
        stores.service.import_page(SOURCE, page, now=NOW)

    assert raised.value.details == [{"field": "memories.1.versions.0.content", "type": "duplicate"}]
    assert stores.client.scan(TableName=TABLE)["Count"] == 0


class SaveBeforeTheImport:
    """A DynamoDB client on which another writer saves a memory of the imported field just before the import's
    transaction: the moment between the import's reads and its write."""

    def __init__(self, client: Any, store: DynamoMemoryStore, scope: ScopeRef) -> None:
        self._client, self._store, self._scope = client, store, scope

    def transact_write_items(self, **kwargs: Any) -> Any:
        self._store.save(self._scope, NewMemory(memory_type=MemoryType.FACT, content="Lives in Paris",
                                                field="residence"))
        return self._client.transact_write_items(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_given_a_concurrent_save_of_an_imported_field_then_the_page_is_refused_whole_and_sent_again_names_it(stores):
    stores.fill(SOURCE)
    (page,) = stores.export_all(SOURCE)
    target = ScopeRef(tenant_id="t-to", user_id="u")
    racing = SaveBeforeTheImport(stores.client, stores.memories, target)
    service = PortabilityService(archive=lambda: DynamoScopeArchive(table_name=TABLE, client=racing),
                                 synonyms=stores.synonyms, embedder=lambda: stores.embedder)

    with pytest.raises(Conflict):
        service.import_page(target, sent(page), now=NOW)

    assert [m.content for m in stores.memories.all_current(target)] == ["Lives in Paris"]  # the racer's alone
    assert stores.layers.hot_memory(target) == [] and stores.files.usage(target).files == 0
    with pytest.raises(Conflict) as again:
        stores.service.import_page(target, sent(page), now=NOW)
    assert again.value.details == [{"field": "memories.0.versions.2.field", "type": "conflict"}]


def test_given_the_table_pushing_back_then_the_import_answers_throttled_and_writes_nothing(stores):
    stores.fill(SOURCE)
    (page,) = stores.export_all(SOURCE)
    target = ScopeRef(tenant_id="t-to", user_id="u")
    busy = ThrottlingDynamo(stores.client)
    service = PortabilityService(archive=lambda: DynamoScopeArchive(table_name=TABLE, client=busy),
                                 synonyms=stores.synonyms, embedder=lambda: stores.embedder)

    with pytest.raises(Throttled):
        service.import_page(target, sent(page), now=NOW)

    assert stores.service.export_page(target, now=NOW).memories == []


def test_given_a_page_too_large_for_one_transaction_then_it_is_refused_before_anything_is_read(stores):
    text = "x" * 32_000  # a logged message's limit
    log = [{"message_id": f"m-{i}", "conversation_id": "c-1", "role": "user", "content": f"{i} {text}",
            "created_at": "2026-01-05T10:00:00Z", "expires_at": "2026-02-05T10:00:00Z"} for i in range(98)]
    page = ImportPage.model_validate({"format": "agent-memory-export", "version": 1, "log": log})

    with pytest.raises(PayloadTooLarge) as raised:
        stores.service.import_page(SOURCE, page, now=NOW)

    assert raised.value.details[0]["type"] == "import_bytes"
