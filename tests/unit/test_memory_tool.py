"""The memory tool's backend answers as the SDK's reference implementation does on a local disk: the same
session of commands runs through both and every answer is compared, text and error flag. Then what the
reference does not have: limits, isolation between users and tenants, and concurrent edits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import BetaMemoryTool20250818CreateCommand, BetaMemoryTool20250818ViewCommand

from agent_memory.domain.lifecycle.memory_edits import MemoryToolResult
from agent_memory.domain.memory_tool.memory_files import (
    MAX_DIRECTORIES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_RENAME_ENTRIES,
    MemoryDirectory,
    MemoryFile,
)
from agent_memory.domain.models import ScopeRef
from agent_memory.errors import Throttled
from agent_memory.services.memory_tool import MemoryToolService
from tests.fakes.memory_files import FakeMemoryFileStore
from tests.fakes.memory_tool_session import (
    NOTES,
    SESSION,
    create,
    delete,
    insert,
    on_this_disk,
    reference_answer,
    rename,
    replace,
    view,
)

NOW = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
ALICE = ScopeRef(tenant_id="acme", user_id="alice")

@pytest.fixture
def service() -> MemoryToolService:
    return MemoryToolService(FakeMemoryFileStore(), clock=lambda: NOW)


def test_given_the_same_session_then_every_answer_is_the_reference_implementations(service, tmp_path):
    reference = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))

    for step, command in enumerate(SESSION):
        expected = reference_answer(reference, command)
        assert (step, on_this_disk(service.execute(ALICE, command), tmp_path)) == (step, expected), command


def test_given_the_sdks_own_command_models_then_they_are_accepted_as_the_dicts_are(service):
    service.execute(ALICE, BetaMemoryTool20250818CreateCommand(command="create", path=NOTES, file_text="a\nb\n"))

    answer = service.execute(ALICE, BetaMemoryTool20250818ViewCommand(command="view", path=NOTES, view_range=[2, 2]))

    assert answer == MemoryToolResult(content=f"Here's the content of {NOTES} with line numbers:\n     2\tb")


def test_a_directory_listing_shows_directories_as_an_ext4_disk_does_and_hides_dot_names(service):
    service.execute(ALICE, create("/memories/a/b/c/d.md", "deep"))
    service.execute(ALICE, create("/memories/.cache/x.md", "x"))
    service.execute(ALICE, create("/memories/a/.draft.md", "x"))

    assert service.execute(ALICE, view("/memories")).content == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
        "4K\t/memories\n4K\t/memories/a/\n4K\t/memories/a/b/")


@pytest.mark.parametrize(("commands", "answer"), [
    ([create("/memories/a.md", "x"), create("/memories/a.md/b.md", "y")],
     "Cannot write /memories/a.md/b.md: /memories/a.md is a file, not a directory."),
    ([create("/memories/d/a.md", "x"), rename("/memories/d", "/memories/d/inner")],
     "Cannot move /memories/d into itself: /memories/d/inner is inside it. Choose a destination outside /memories/d."),
    ([create("/memories/a.md", "x"), create("/memories/b.md", "y"), rename("/memories/b.md", "/memories/a.md/b.md")],
     "Cannot write /memories/a.md/b.md: /memories/a.md is a file, not a directory."),
])
def test_where_the_reference_crashes_the_answer_is_an_error_naming_the_problem(service, commands, answer):
    *setup, last = commands
    for command in setup:
        assert not service.execute(ALICE, command).is_error
    before = service.execute(ALICE, view("/memories"))

    assert service.execute(ALICE, last) == MemoryToolResult(content=answer, is_error=True)
    assert service.execute(ALICE, view("/memories")) == before


@pytest.mark.parametrize(("command", "answer"), [
    ({"command": "format_disk"}, "Unknown command: format_disk. Use one of: view, create, str_replace, insert, "
                                 "delete, rename."),
    ({"path": "/memories"}, 'Invalid memory command: the "command" field is missing; use one of: view, create, '
                            "str_replace, insert, delete, rename."),
    ("view /memories", 'Invalid memory command: expected a JSON object with a "command" field.'),
    ({"command": "create", "path": NOTES}, "Invalid `create` command: file_text: Field required"),
    ({"command": "insert", "path": NOTES, "insert_line": True, "insert_text": "x"},
     "Invalid `insert` command: insert_line: Value error, must be a number, not true or false"),
    ({"command": "view", "path": 42}, "Invalid `view` command: path: Input should be a valid string"),
    ({"command": "view", "path": "/memories/a\x00"}, "Path /memories/a\\u0000 contains a control or invisible "
                                                     "character (U+0000); use visible characters only."),
    (rename("/memories/%2e%2e/x", "/memories/y"), "Path /memories/%2e%2e/x contains a percent-encoded '..' segment; "
                                                  "write the path without percent-encoding and without '..'."),
    (rename("/memories/x", "/memoriesX/y"), "Path /memoriesX/y is outside /memories: write /memories or "
                                            "/memories/<name>."),
])
def test_a_bad_command_or_path_is_an_error_answer_the_model_can_act_on(service, command, answer):
    assert service.execute(ALICE, command) == MemoryToolResult(content=answer, is_error=True)


def test_fields_the_tool_may_add_later_are_ignored(service):
    answer = service.execute(ALICE, {**view("/memories"), "cache_hint": "x"})

    assert not answer.is_error


def test_the_result_is_the_json_body_an_http_route_returns(service):
    assert service.execute(ALICE, delete("/memories")).model_dump() == {
        "content": "Cannot delete the /memories directory itself", "is_error": True}


# ---- limits ------------------------------------------------------------------------------------


def test_a_file_holds_at_most_64_kib_of_utf8_text_however_it_is_written(service):
    assert not service.execute(ALICE, create("/memories/full.md", "x" * MAX_FILE_BYTES)).is_error
    too_big = service.execute(ALICE, create("/memories/over.md", "é" * (MAX_FILE_BYTES // 2 + 1)))
    grown = service.execute(ALICE, replace("/memories/full.md", "xx", "x"))  # not unique: the reference's error
    service.execute(ALICE, create("/memories/small.md", "a\n"))
    replaced = service.execute(ALICE, replace("/memories/small.md", "a", "y" * MAX_FILE_BYTES))
    inserted = service.execute(ALICE, insert("/memories/small.md", 1, "z" * MAX_FILE_BYTES))

    assert too_big.is_error and "65538 bytes" in too_big.content and "64 KiB" in too_big.content
    assert grown.is_error and grown.content.startswith("No replacement was performed. Multiple occurrences")
    assert replaced.is_error and replaced.content.startswith("No replacement was performed: /memories/small.md")
    assert inserted.is_error and inserted.content.startswith("Nothing was inserted: /memories/small.md")
    assert service.execute(ALICE, view("/memories/over.md")).is_error
    assert service.execute(ALICE, view("/memories/small.md")).content.endswith("     1\ta\n     2\t")


def test_text_that_is_not_unicode_is_refused_and_nothing_is_written(service):
    answer = service.execute(ALICE, create("/memories/bad.md", "half a pair \ud800"))

    assert answer.is_error and "lone surrogate" in answer.content
    assert service.execute(ALICE, view("/memories/bad.md")).is_error


def test_a_user_has_at_most_500_files_and_room_comes_back_after_a_delete(service):
    for n in range(MAX_FILES):
        assert not service.execute(ALICE, create(f"/memories/f{n:03d}.md", "x")).is_error

    refused = service.execute(ALICE, create("/memories/one-more.md", "x"))
    service.execute(ALICE, delete("/memories/f000.md"))

    assert refused.is_error and "already holds 500 files" in refused.content
    assert not service.execute(ALICE, create("/memories/one-more.md", "x")).is_error


def test_a_user_has_at_most_500_directories_and_existing_ones_still_take_files():
    store = FakeMemoryFileStore()
    for n in range(MAX_DIRECTORIES):
        store.entries[(ALICE, f"/memories/d{n:03d}")] = MemoryDirectory(path=f"/memories/d{n:03d}", created_at=NOW)
    service = MemoryToolService(store, clock=lambda: NOW)

    refused = service.execute(ALICE, create("/memories/new/a.md", "x"))
    moved = service.execute(ALICE, rename("/memories/d000", "/memories/new/d000"))

    assert refused.is_error and "500 directories" not in refused.content and "of the 500" in refused.content
    assert moved.is_error and "needs 1 new directories" in moved.content
    assert not service.execute(ALICE, create("/memories/d001/a.md", "x")).is_error
    assert not service.execute(ALICE, rename("/memories/d002", "/memories/d999")).is_error


def test_a_directory_moves_whole_up_to_the_transaction_limit_and_is_refused_past_it(service):
    for n in range(MAX_RENAME_ENTRIES):
        service.execute(ALICE, create(f"/memories/big/{n:02d}.md", "x"))

    refused = service.execute(ALICE, rename("/memories/big", "/memories/moved"))
    service.execute(ALICE, delete("/memories/big/00.md"))
    moved = service.execute(ALICE, rename("/memories/big", "/memories/moved"))

    assert refused.is_error and f"holds {MAX_RENAME_ENTRIES} files and directories" in refused.content
    assert "smaller parts" in refused.content
    assert moved == MemoryToolResult(content="Successfully renamed /memories/big to /memories/moved")


# ---- isolation, faults, concurrency ---------------------------------------------------------------


def test_a_users_files_are_invisible_to_another_user_and_to_the_same_user_in_another_tenant(service):
    service.execute(ALICE, create("/memories/secret.md", "alice's note"))
    empty_root = service.execute(ScopeRef(tenant_id="acme", user_id="nobody"), view("/memories"))

    for other in (ScopeRef(tenant_id="acme", user_id="bob"), ScopeRef(tenant_id="other", user_id="alice")):
        assert service.execute(other, view("/memories")).content == empty_root.content
        assert service.execute(other, view("/memories/secret.md")).is_error
        assert service.execute(other, delete("/memories/secret.md")).is_error
        assert not service.execute(other, create("/memories/secret.md", "theirs")).is_error
    assert service.execute(ALICE, view("/memories/secret.md")).content.endswith("1\talice's note")


def test_a_store_fault_is_raised_for_the_caller_to_retry_not_answered():
    service = MemoryToolService(FakeMemoryFileStore(fail=Throttled("busy")), clock=lambda: NOW)

    with pytest.raises(Throttled):
        service.execute(ALICE, view("/memories/notes.md"))


class EditedMeanwhile(FakeMemoryFileStore):
    """Another request edits the file between this one's read and its write."""

    def get(self, user: ScopeRef, path: str) -> MemoryFile | MemoryDirectory | None:
        found = super().get(user, path)
        if isinstance(found, MemoryFile):
            self.update(user, path, found.text + "theirs\n", expected_version=found.version, now=NOW)
        return found


def test_an_edit_racing_another_is_refused_and_the_other_edit_is_kept():
    store = EditedMeanwhile()
    service = MemoryToolService(store, clock=lambda: NOW)
    service.execute(ALICE, create(NOTES, "mine\n"))

    answer = service.execute(ALICE, replace(NOTES, "mine", "ours"))

    assert answer == MemoryToolResult(content=f"{NOTES} was changed by another request while this command ran; "
                                              "view it and try again.", is_error=True)
    found = store.entries[(ALICE, NOTES)]
    assert isinstance(found, MemoryFile) and "ours" not in found.text and "theirs" in found.text


def test_given_an_old_str_found_thousands_of_times_then_the_error_lists_ten_and_counts_the_rest(service):
    tool = service
    tool.execute(ALICE, create("/memories/big.md", "ab\n" * 20_000))

    answer = tool.execute(ALICE, replace("/memories/big.md", "a", "x"))

    assert answer.is_error and len(answer.content) < 300
    assert answer.content == ("No replacement was performed. Multiple occurrences of old_str `a` in lines: "
                              "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 19990 more (20000 occurrences). Please ensure it "
                              "is unique")


def test_given_a_long_old_str_then_the_error_echoes_its_start_and_length_only(service):
    tool = service
    tool.execute(ALICE, create("/memories/notes.md", "short\n"))

    answer = tool.execute(ALICE, replace("/memories/notes.md", "q" * 60_000, "x"))

    assert answer.is_error and len(answer.content) < 400 and "(60000 characters)" in answer.content


def test_given_a_few_occurrences_then_the_error_is_the_reference_implementations(service, tmp_path):
    session = [create("/memories/few.md", "ab\nb\nbb\n"), replace("/memories/few.md", "b", "x")]
    tool, reference = service, BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))

    ours = [tool.execute(ALICE, command) for command in session][-1]
    theirs = [reference_answer(reference, command) for command in session][-1]

    assert ours.is_error and ours == theirs
