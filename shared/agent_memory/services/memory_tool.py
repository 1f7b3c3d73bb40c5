"""A server-side backend for Claude's memory tool (``memory_20250818``): its files kept in DynamoDB.

The model sends ``view``, ``create``, ``str_replace``, ``insert``, ``delete`` and ``rename`` commands over
paths under ``/memories``; ``execute`` answers each with the text the tool's reference implementation
(the SDK's local-filesystem one) gives for the same command, so the model sees the behaviour it was
trained on. Every problem the model can fix (a bad command, a refused path, a missing file, an
``old_str`` that is absent or not unique, a limit) is an answer with ``is_error`` set, never an
exception. Only store faults (``Throttled``...) are raised, so the caller can retry the call.

What these files are: the model's own working notes, kept beside the user's memories but not memories.
They are not extracted, not searched, not in the profile and not injected as context; the model reads
them with the tool when it decides to. They live in the user's partition (so one tenant's user never
sees another's, nor the same user id in another tenant), and go when the partition goes.

Limits, each answered with an error the model can act on:

* a file holds at most 64 KiB of UTF-8 text (``MAX_FILE_BYTES``; a DynamoDB item holds 400 KB), after
  ``create``, ``str_replace`` and ``insert`` alike;
* a user has at most 500 files (``MAX_FILES``) and 500 directories (``MAX_DIRECTORIES``);
* a rename moves at most 40 entries (``MAX_RENAME_ENTRIES``, one DynamoDB transaction); a larger
  directory is moved in parts;
* a path is at most 255 characters and 8 directories deep, a name at most 100 characters (memory_paths).

Where the reference implementation crashes (creating a file below a file, moving a directory into
itself) the answer is an error naming the problem. A failed rename creates nothing, where the
reference leaves the destination's new parent directories behind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from agent_memory.domain.lifecycle.memory_edits import (
    MemoryEditError,
    MemoryToolResult,
    insert_at,
    render_directory,
    render_file,
    replace_once,
)
from agent_memory.domain.memory_tool.memory_files import (
    MAX_DIRECTORIES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_RENAME_ENTRIES,
    MemoryDirectory,
    MemoryFile,
    text_size,
)
from agent_memory.domain.memory_tool.memory_paths import ROOT, MemoryPathError, ancestors, is_within, memory_path, shown
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.errors import Conflict, InvalidInput, NotFound
from agent_memory.ports import MemoryFileStore

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


class _Command(BaseModel):
    # Field names exactly as the tool sends them. Unknown fields are ignored, as the reference does: a
    # field a later version of the tool adds must not turn every command into an error.
    model_config = ConfigDict(extra="ignore")

    @field_validator("view_range", "insert_line", mode="before", check_fields=False)
    @classmethod
    def _no_booleans(cls, value: object) -> object:
        """JSON's true is not line 1."""
        if isinstance(value, bool) or (isinstance(value, list) and any(isinstance(v, bool) for v in value)):
            raise ValueError("must be a number, not true or false")
        return value


class ViewCommand(_Command):
    command: Literal["view"]
    path: str
    view_range: list[int] | None = None


class CreateCommand(_Command):
    command: Literal["create"]
    path: str
    file_text: str


class StrReplaceCommand(_Command):
    command: Literal["str_replace"]
    path: str
    old_str: str
    new_str: str


class InsertCommand(_Command):
    command: Literal["insert"]
    path: str
    insert_line: int
    insert_text: str


class DeleteCommand(_Command):
    command: Literal["delete"]
    path: str


class RenameCommand(_Command):
    command: Literal["rename"]
    old_path: str
    new_path: str


# One request body of the memory tool, told apart by "command" (field names as the tool sends them).
MemoryToolCommand = Annotated[
    ViewCommand | CreateCommand | StrReplaceCommand | InsertCommand | DeleteCommand | RenameCommand,
    Field(discriminator="command"),
]
memory_tool_command: TypeAdapter[MemoryToolCommand] = TypeAdapter(MemoryToolCommand)


class _Refused(Exception):
    """An answer the model gets as an error; raised inside a command, caught once in `execute`."""


def _path(raw: str) -> str:
    try:
        return memory_path(raw)
    except MemoryPathError as error:
        raise _Refused(str(error)) from error


def _changed_meanwhile(raw: str) -> _Refused:
    return _Refused(f"{shown(raw)} was changed by another request while this command ran; view it and try again.")


def _checked_size(text: str, what: str) -> None:
    size = text_size(text)
    if size is None:
        raise _Refused(f"{what} is not valid Unicode text (it holds a lone surrogate); nothing was written.")
    if size > MAX_FILE_BYTES:
        raise _Refused(f"{what} would be {size} bytes; a memory file holds at most {MAX_FILE_BYTES} bytes "
                       f"(64 KiB) of UTF-8 text. Split it into smaller files; nothing was written.")


def _command_error(error: ValidationError, payload: object) -> str:
    if not isinstance(payload, dict):
        return "Invalid memory command: expected a JSON object with a \"command\" field."
    command = payload.get("command")
    if command is None:
        return f"Invalid memory command: the \"command\" field is missing; use one of: {', '.join(COMMANDS)}."
    if command not in COMMANDS:
        return f"Unknown command: {command}. Use one of: {', '.join(COMMANDS)}."
    problems = "; ".join(f"{'.'.join(str(part) for part in issue['loc'][1:]) or 'command'}: {issue['msg']}"
                         for issue in error.errors())
    return f"Invalid `{command}` command: {problems}"


class MemoryToolService:
    def __init__(self, store: MemoryFileStore, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock

    def execute(self, user: ScopeRef, command: object) -> MemoryToolResult:
        """Run one memory-tool command: the tool's input as a dict (or any pydantic model of it, the SDK's
        command types included). Store faults raise; everything else is an answer."""
        payload = command.model_dump() if isinstance(command, BaseModel) else command
        try:
            parsed = memory_tool_command.validate_python(payload)
        except ValidationError as error:
            return MemoryToolResult(content=_command_error(error, payload), is_error=True)
        try:
            return MemoryToolResult(content=self._run(user, parsed))
        except _Refused as refusal:
            return MemoryToolResult(content=str(refusal), is_error=True)

    def _run(self, user: ScopeRef, command: MemoryToolCommand) -> str:
        match command:
            case ViewCommand():
                return self._view(user, command)
            case CreateCommand():
                return self._create(user, command)
            case StrReplaceCommand():
                return self._str_replace(user, command)
            case InsertCommand():
                return self._insert(user, command)
            case DeleteCommand():
                return self._delete(user, command)
            case RenameCommand():
                return self._rename(user, command)
        assert_never(command)

    # ---- the commands --------------------------------------------------------------------------

    def _view(self, user: ScopeRef, command: ViewCommand) -> str:
        path = _path(command.path)
        found = MemoryDirectory(path=ROOT, created_at=self._clock()) if path == ROOT else self._store.get(user, path)
        if isinstance(found, MemoryFile):
            return render_file(command.path, found.text, command.view_range)
        if isinstance(found, MemoryDirectory):
            return render_directory(command.path, path, self._store.list_under(user, path))
        raise _Refused(f"The path {command.path} does not exist. Please provide a valid path.")

    def _create(self, user: ScopeRef, command: CreateCommand) -> str:
        path = _path(command.path)
        if path == ROOT or self._store.get(user, path) is not None:
            raise _Refused(f"File {command.path} already exists")
        _checked_size(command.file_text, f"The file {command.path}")
        missing = self._missing_parents(user, path, command.path)
        usage = self._store.usage(user)
        if usage.files >= MAX_FILES:
            raise _Refused(f"Cannot create {command.path}: the memory directory already holds {usage.files} files, "
                           f"the most it may hold. Delete or merge files you no longer need, then try again.")
        self._check_directory_room(usage.directories, missing, command.path)
        now = self._clock()
        try:
            self._store.create(user, MemoryFile(path=path, text=command.file_text, created_at=now, updated_at=now))
        except Conflict as error:
            raise _changed_meanwhile(command.path) from error
        return f"File created successfully at: {command.path}"

    def _str_replace(self, user: ScopeRef, command: StrReplaceCommand) -> str:
        file = self._file(user, command.path)
        try:
            text, snippet = replace_once(command.path, file.text, command.old_str, command.new_str)
        except MemoryEditError as error:
            raise _Refused(str(error)) from error
        _checked_size(text, f"No replacement was performed: {command.path}")
        self._update(user, file, text, command.path)
        return snippet

    def _insert(self, user: ScopeRef, command: InsertCommand) -> str:
        file = self._file(user, command.path)
        try:
            text = insert_at(file.text, command.insert_line, command.insert_text)
        except MemoryEditError as error:
            raise _Refused(str(error)) from error
        _checked_size(text, f"Nothing was inserted: {command.path}")
        self._update(user, file, text, command.path)
        return f"The file {command.path} has been edited."

    def _delete(self, user: ScopeRef, command: DeleteCommand) -> str:
        path = _path(command.path)
        if path == ROOT:
            raise _Refused(f"Cannot delete the {ROOT} directory itself")
        if self._store.delete(user, path) == 0:
            raise _Refused(f"The path {command.path} does not exist")
        return f"Successfully deleted {command.path}"

    def _rename(self, user: ScopeRef, command: RenameCommand) -> str:
        old, new = _path(command.old_path), _path(command.new_path)
        if old == ROOT:
            raise _Refused(f"Cannot rename the {ROOT} directory itself")
        if new == ROOT or self._store.get(user, new) is not None:
            raise _Refused(f"The destination {command.new_path} already exists")
        source = self._store.get(user, old)
        if source is None:
            raise _Refused(f"The path {command.old_path} does not exist")
        if is_within(new, old):
            raise _Refused(f"Cannot move {command.old_path} into itself: {command.new_path} is inside it. "
                           f"Choose a destination outside {command.old_path}.")
        missing = self._missing_parents(user, new, command.new_path)
        if isinstance(source, MemoryDirectory):
            self._check_movable(user, old, command.old_path)
        if missing:
            self._check_directory_room(self._store.usage(user).directories, missing, command.new_path)
        try:
            self._store.rename(user, old, new, now=self._clock())
        except (Conflict, NotFound) as error:
            raise _changed_meanwhile(command.old_path) from error
        except InvalidInput as error:  # grew past the limit since it was counted
            raise _Refused(f"Cannot rename {command.old_path}: {error.message}.") from error
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    # ---- shared steps --------------------------------------------------------------------------

    def _file(self, user: ScopeRef, raw: str) -> MemoryFile:
        path = _path(raw)
        found = None if path == ROOT else self._store.get(user, path)
        if path == ROOT or isinstance(found, MemoryDirectory):
            raise _Refused(f"The path {raw} is not a file.")
        if found is None:
            raise _Refused(f"The path {raw} does not exist. Please provide a valid path.")
        return found

    def _update(self, user: ScopeRef, file: MemoryFile, text: str, raw: str) -> None:
        try:
            self._store.update(user, file.path, text, expected_version=file.version, now=self._clock())
        except Conflict as error:
            raise _changed_meanwhile(raw) from error

    def _missing_parents(self, user: ScopeRef, path: str, raw: str) -> int:
        """How many of the path's parent directories a write must create; refused when one is a file.
        Walks up from the nearest: the store keeps every directory's parents, so the first one found
        ends the walk."""
        missing = 0
        for parent in ancestors(path):
            found = self._store.get(user, parent)
            if isinstance(found, MemoryFile):
                raise _Refused(f"Cannot write {raw}: {parent} is a file, not a directory.")
            if isinstance(found, MemoryDirectory):
                break
            missing += 1
        return missing

    def _check_directory_room(self, directories: int, missing: int, raw: str) -> None:
        if missing and directories + missing > MAX_DIRECTORIES:
            raise _Refused(f"Cannot write {raw}: it needs {missing} new directories and the memory directory "
                           f"already holds {directories} of the {MAX_DIRECTORIES} it may hold. Delete empty "
                           f"directories, or write into an existing one.")

    def _check_movable(self, user: ScopeRef, old: str, raw: str) -> None:
        entries = len(self._store.list_under(user, old))
        if entries + 1 > MAX_RENAME_ENTRIES:
            raise _Refused(f"Cannot rename {raw}: it holds {entries} files and directories, and at most "
                           f"{MAX_RENAME_ENTRIES - 1} can be moved at once. Move its contents in smaller parts "
                           f"(rename subdirectories or files one by one), then rename the emptier directory.")
