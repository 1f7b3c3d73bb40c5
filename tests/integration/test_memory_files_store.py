"""One contract for the memory tool's file store: the DynamoDB store on moto and on DynamoDB Local, and the
fake the unit tests use, so the fake cannot drift from the real store. Then what only DynamoDB shows: the
files sit beside the user's memories and are never read as memories."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.memory_files import DynamoMemoryFileStore, file_key
from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.adapters.opensearch.sync import SyncAction, classify
from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.bootstrap.services import build_services
from agent_memory.domain.keys import partition_key
from agent_memory.domain.memory_tool.memory_files import MAX_RENAME_ENTRIES, MemoryDirectory, MemoryEntry, MemoryFile
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType
from agent_memory.errors import Conflict, InvalidInput, NotFound, Throttled
from agent_memory.ports import MemoryFileStore
from agent_memory.services.memory_tool import MemoryToolService
from agent_memory.settings import Settings
from tests.conftest import TABLE
from tests.fakes.memory_files import FakeMemoryFileStore
from tests.fakes.memory_tool_session import SESSION, on_this_disk, reference_answer

NOW = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


@pytest.fixture(params=["moto", "dynamodb-local", "fake"])
def files(request: pytest.FixtureRequest) -> Iterator[MemoryFileStore]:
    if request.param == "fake":
        yield FakeMemoryFileStore()
    else:
        client = request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")
        yield DynamoMemoryFileStore(table_name=TABLE, client=client)


def a_file(path: str, text: str = "笔记 notes\n", at: datetime = NOW) -> MemoryFile:
    return MemoryFile(path=path, text=text, created_at=at, updated_at=at)


def paths(entries: list[MemoryEntry]) -> list[str]:
    return [e.path + ("/" if e.is_directory else "") for e in entries]


def test_given_a_created_file_when_read_then_it_comes_back_with_its_parent_directories(files, user):
    files.create(user, a_file("/memories/客户/张三.md", "张三 likes tea\n"))

    found = files.get(user, "/memories/客户/张三.md")
    assert isinstance(found, MemoryFile)
    assert (found.text, found.size, found.version, found.created_at) == ("张三 likes tea\n", 17, 1, NOW)
    assert isinstance(files.get(user, "/memories/客户"), MemoryDirectory)
    assert files.get(user, "/memories/nothing.md") is None


def test_given_a_path_taken_when_created_again_or_below_a_file_or_at_a_directory_then_conflict(files, user):
    files.create(user, a_file("/memories/a/b.md"))

    for path in ("/memories/a/b.md", "/memories/a/b.md/c.md", "/memories/a"):
        with pytest.raises(Conflict):
            files.create(user, a_file(path, "other"))
    assert files.get(user, "/memories/a/b.md") == a_file("/memories/a/b.md")


def test_given_a_tree_when_listed_then_everything_below_comes_back_by_path_with_sizes(files, user):
    files.create(user, a_file("/memories/a/x/deep.md", "12345"))
    files.create(user, a_file("/memories/a/b.md", ""))
    files.create(user, a_file("/memories/top.md", "é"))

    assert paths(files.list_under(user, "/memories")) == [
        "/memories/a/", "/memories/a/b.md", "/memories/a/x/", "/memories/a/x/deep.md", "/memories/top.md"]
    assert paths(files.list_under(user, "/memories/a")) == [
        "/memories/a/b.md", "/memories/a/x/", "/memories/a/x/deep.md"]
    sizes = {e.path: e.size for e in files.list_under(user, "/memories") if not e.is_directory}
    assert sizes == {"/memories/a/x/deep.md": 5, "/memories/a/b.md": 0, "/memories/top.md": 2}
    assert files.list_under(user, "/memories/top.md") == []
    usage = files.usage(user)
    assert (usage.files, usage.directories, usage.bytes) == (3, 2, 7)


def test_given_a_file_when_updated_at_its_version_then_the_text_changes_and_a_stale_version_conflicts(files, user):
    files.create(user, a_file("/memories/n.md", "one"))

    files.update(user, "/memories/n.md", "two", expected_version=1, now=NOW + timedelta(minutes=1))

    found = files.get(user, "/memories/n.md")
    assert isinstance(found, MemoryFile)
    assert (found.text, found.version, found.updated_at) == ("two", 2, NOW + timedelta(minutes=1))
    assert found.created_at == NOW
    with pytest.raises(Conflict):
        files.update(user, "/memories/n.md", "three", expected_version=1, now=NOW)
    with pytest.raises(Conflict):
        files.update(user, "/memories/gone.md", "x", expected_version=1, now=NOW)
    assert files.usage(user).files == 1


def test_given_files_when_deleted_then_a_file_or_a_whole_directory_goes_and_its_parent_stays(files, user):
    for path in ("/memories/a/b/c.md", "/memories/a/b/d.md", "/memories/a/e.md"):
        files.create(user, a_file(path))

    assert files.delete(user, "/memories/a/e.md") == 1
    assert files.delete(user, "/memories/a/e.md") == 0
    assert files.delete(user, "/memories/a/b") == 3
    assert paths(files.list_under(user, "/memories")) == ["/memories/a/"]
    assert files.delete(user, "/memories/nothing") == 0


def test_given_a_file_when_renamed_into_a_new_directory_then_it_moves_whole(files, user):
    files.create(user, a_file("/memories/a.md", "keep me"))

    files.rename(user, "/memories/a.md", "/memories/new/dir/b.md", now=NOW)

    assert files.get(user, "/memories/a.md") is None
    moved = files.get(user, "/memories/new/dir/b.md")
    assert isinstance(moved, MemoryFile)
    assert (moved.text, moved.created_at, moved.version) == ("keep me", NOW, 1)
    assert paths(files.list_under(user, "/memories")) == ["/memories/new/", "/memories/new/dir/",
                                                          "/memories/new/dir/b.md"]


def test_given_a_directory_when_renamed_then_everything_below_moves_with_it(files, user):
    for path in ("/memories/p/x.md", "/memories/p/q/y.md"):
        files.create(user, a_file(path, path))
    files.delete(user, "/memories/p/q/y.md")  # an emptied directory moves too

    files.rename(user, "/memories/p", "/memories/r", now=NOW)

    assert paths(files.list_under(user, "/memories")) == ["/memories/r/", "/memories/r/q/", "/memories/r/x.md"]
    moved = files.get(user, "/memories/r/x.md")
    assert isinstance(moved, MemoryFile) and moved.text == "/memories/p/x.md"


def test_given_a_rename_that_cannot_be_done_then_it_is_refused_and_nothing_moves(files, user):
    files.create(user, a_file("/memories/a/b.md"))
    files.create(user, a_file("/memories/c.md"))
    before = files.list_under(user, "/memories")

    with pytest.raises(NotFound):
        files.rename(user, "/memories/none.md", "/memories/z.md", now=NOW)
    for old, new in [("/memories/a/b.md", "/memories/c.md"), ("/memories/c.md", "/memories/a"),
                     ("/memories/a", "/memories/a/inner"), ("/memories/a", "/memories/c.md/x")]:
        with pytest.raises(Conflict):
            files.rename(user, old, new, now=NOW)
    assert files.list_under(user, "/memories") == before


def test_given_a_directory_past_the_transaction_limit_when_renamed_then_it_is_refused_whole(files, user):
    for n in range(MAX_RENAME_ENTRIES):
        files.create(user, a_file(f"/memories/big/{n:02d}.md"))

    with pytest.raises(InvalidInput):
        files.rename(user, "/memories/big", "/memories/moved", now=NOW)
    assert files.usage(user).files == MAX_RENAME_ENTRIES
    assert files.get(user, "/memories/moved") is None


def test_given_the_largest_movable_directory_when_renamed_then_all_of_it_moves(files, user):
    for n in range(MAX_RENAME_ENTRIES - 1):
        files.create(user, a_file(f"/memories/big/{n:02d}.md", "x" * 1000))

    files.rename(user, "/memories/big", "/memories/deep/er/moved", now=NOW)

    assert len(files.list_under(user, "/memories/deep/er/moved")) == MAX_RENAME_ENTRIES - 1


def test_files_of_one_user_are_invisible_to_another_and_to_the_same_user_in_another_tenant(files, user):
    files.create(user, a_file("/memories/secret.md"))
    others = [ScopeRef(tenant_id=user.tenant_id, user_id="someone-else"),
              ScopeRef(tenant_id="other-" + user.tenant_id, user_id=user.user_id)]

    for other in others:
        assert files.get(other, "/memories/secret.md") is None
        assert files.list_under(other, "/memories") == []
        assert files.usage(other).files == 0
        assert files.delete(other, "/memories/secret.md") == 0
    assert files.get(user, "/memories/secret.md") is not None


# ---- DynamoDB only -------------------------------------------------------------------------------


@pytest.fixture(params=["moto", "dynamodb-local"])
def client(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")


def test_given_the_session_over_dynamodb_then_every_answer_is_the_reference_implementations(client, user, tmp_path):
    service = MemoryToolService(DynamoMemoryFileStore(table_name=TABLE, client=client), clock=lambda: NOW)
    reference = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))

    for step, command in enumerate(SESSION):
        expected = reference_answer(reference, command)
        assert (step, on_this_disk(service.execute(user, command), tmp_path)) == (step, expected), command


def test_given_a_file_created_in_a_directory_while_it_is_renamed_then_the_rename_is_cancelled(client, user):
    class RacingStore(DynamoMemoryFileStore):
        """Creates a file below the directory between the rename's read and its transaction."""

        raced = False

        def _items(self, user: ScopeRef, directory: str, projection: str | None = None) -> Iterator[dict[str, Any]]:
            items = list(super()._items(user, directory, projection))
            if projection is None and not self.raced:
                self.raced = True
                self.create(user, a_file(directory + "/sub/late.md"))
            return iter(items)

    store = RacingStore(table_name=TABLE, client=client)
    store.create(user, a_file("/memories/d/sub/early.md"))

    with pytest.raises(Conflict):
        store.rename(user, "/memories/d", "/memories/e", now=NOW)
    assert paths(store.list_under(user, "/memories")) == [
        "/memories/d/", "/memories/d/sub/", "/memories/d/sub/early.md", "/memories/d/sub/late.md"]


def test_given_a_user_with_files_their_memories_list_search_and_load_as_before(dynamodb_client):
    user = ScopeRef(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="alice")
    built = build_services(Settings(memory_table_name=TABLE, embedding_provider="none"),
                           dynamodb_client=dynamodb_client, embedder=None)
    built.save.save(user, NewMemory(memory_type=MemoryType.PREFERENCE, content="I play tennis every Sunday"))
    version = built.store.user_version(user)
    tool = MemoryToolService(DynamoMemoryFileStore(table_name=TABLE, client=dynamodb_client))
    for n in range(3):
        assert not tool.execute(user, {"command": "create", "path": f"/memories/tennis/{n}.md",
                                       "file_text": "tennis tennis Sunday 网球"}).is_error
    layers = DynamoLayerStore(table_name=TABLE, client=dynamodb_client)
    layers.put_hot(user, HotMemoryEntry(type=HotMemoryType.STATUS, key="k", value="v", created_at=NOW,
                                        updated_at=NOW))

    assert [m.content for m in built.store.all_current(user)] == ["I play tennis every Sunday"]
    assert [m.content for m in built.store.list_current(user).items] == ["I play tennis every Sunday"]
    found = search_memories(built.search, user, SearchRequest(query="tennis Sunday", search_mode="keyword",
                                                    min_relevance_score=0, limit=10))
    assert [r.content_preview for r in found.results] == ["I play tennis every Sunday"]
    assert built.load.load_context(user, "tennis", 10).total_memories == 1
    assert built.store.access_stats(user) == {}
    assert [e.key for e in layers.hot_memory(user)] == ["k"]
    assert built.store.user_version(user) == version + 1  # the hot-memory write, not the files


class StubClient:
    """A DynamoDB client whose every call fails as `error` says, or hands back unprocessed keys forever."""

    def __init__(self, code: str, reasons: list[str] | None = None) -> None:
        self.response: dict[str, Any] = {"Error": {"Code": code, "Message": code}}
        if reasons is not None:
            self.response["CancellationReasons"] = [{"Code": r} for r in reasons]

    def _fail(self, **_: Any) -> Any:
        raise ClientError(self.response, "call")

    query = transact_write_items = update_item = _fail

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        return {"Responses": {}, "UnprocessedKeys": RequestItems}


@pytest.mark.parametrize(("code", "reasons", "raised"), [
    ("ProvisionedThroughputExceededException", None, Throttled),
    ("TransactionCanceledException", ["None", "ThrottlingError"], Throttled),
    ("TransactionCanceledException", ["ConditionalCheckFailed", "None"], Conflict),
    ("ConditionalCheckFailedException", None, Conflict),
])
def test_sdk_errors_become_domain_errors_in_one_place(code, reasons, raised, user):
    store = DynamoMemoryFileStore(table_name=TABLE, client=StubClient(code, reasons), max_attempts=2)

    with pytest.raises(raised):
        if code == "ProvisionedThroughputExceededException":
            store.list_under(user, "/memories")
        elif code == "ConditionalCheckFailedException":
            store.update(user, "/memories/a.md", "x", expected_version=1, now=NOW)
        else:
            store.create(user, a_file("/memories/a/b.md"))
    with pytest.raises(Throttled):  # unprocessed keys after every retry
        store.get(user, "/memories/a.md")


def test_stream_records_of_file_items_are_ignored_by_the_search_indexer():
    keys = {"pk": {"S": "T#t#U#u"}, "sk": {"S": file_key("/memories/notes.md")}}
    for event in ("INSERT", "MODIFY", "REMOVE"):
        record = {"eventName": event, "dynamodb": {"Keys": keys, "NewImage": {**keys, "text": {"S": "x"}}}}
        assert classify(record) is SyncAction.IGNORE


def test_file_items_live_in_the_users_partition_under_their_own_prefix(dynamodb_client, user):
    DynamoMemoryFileStore(table_name=TABLE, client=dynamodb_client).create(user, a_file("/memories/a/b.md"))

    items = dynamodb_client.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                                  ExpressionAttributeValues={":pk": {"S": partition_key(user)}})["Items"]
    assert sorted((i["sk"]["S"], i["kind"]["S"]) for i in items) == [
        ("FILE#/memories/a/", "memory_dir"), ("FILE#/memories/a/b.md", "memory_file")]
