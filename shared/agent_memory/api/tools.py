"""The memory tools: their Anthropic definitions (generated from the models that validate their input)
and the executor that runs a model's `tool_use` block and answers with the `tool_result` block.

A mistake the model can fix (a bad or missing argument, an unknown tool, a memory that is not there)
comes back as a tool_result with `is_error`, worded for the model. Faults of the service itself
(throttling, the LLM or the store down) stay HTTP errors, so the caller's retry policy takes over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints, ValidationError
from pydantic.alias_generators import to_snake

from agent_memory.api.load import LoadContextOutput
from agent_memory.api.log import MAX_LOG_MESSAGE_BYTES, AppendResult
from agent_memory.api.memory_layers import HotMemoryView, PutHotMemoryRequest, ReportList, ReportSearchRequest
from agent_memory.api.profile import SummarizeOutput
from agent_memory.api.schemas import Content, NonBlank
from agent_memory.api.search import SearchRequest, memory_detail, search_memories
from agent_memory.domain.keys import MEMORY_KEY_PATTERN, Id
from agent_memory.domain.models import AsOf, MemoryType, NewMemory, Origin, ScopeRef
from agent_memory.domain.requests import RequestModel, max_utf8_bytes
from agent_memory.domain.tiers.memory_layers import HotMemoryKey, HotMemoryType, LogAppend, LogEntry
from agent_memory.domain.tools import (
    CORE_TOOLS,
    EXTENDED_TOOLS,
    PROPERTY_DESCRIPTIONS,
    SYSTEM_PROMPTS,
    TOOL_DESCRIPTIONS,
    Lang,
)
from agent_memory.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from agent_memory.services.conversation_log import ConversationLogService
    from agent_memory.services.load import LoadService
    from agent_memory.services.memory_layers import MemoryLayersService
    from agent_memory.services.save import SaveService
    from agent_memory.services.search import SearchService
    from agent_memory.services.summarize import SummarizeService

Include = Literal["core", "all"]


class SaveUserMemoryInput(RequestModel):
    memory_type: MemoryType
    content: Content
    category: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)] | None = None


class GetMemoryDetailInput(RequestModel):
    memory_key: Annotated[str, StringConstraints(pattern=MEMORY_KEY_PATTERN)]


class GetUserContextInput(RequestModel):
    query: Annotated[str, StringConstraints(max_length=2000)]
    limit: int = Field(default=20, ge=1, le=100)
    as_of: AsOf | None = None


class SummarizeProfileInput(RequestModel):
    as_of: AsOf | None = None


class LogMessageInput(RequestModel):
    conversation_id: Id
    role: Literal["user", "assistant"]
    content: Annotated[str, NonBlank, AfterValidator(max_utf8_bytes(MAX_LOG_MESSAGE_BYTES))]
    extract: bool = False


class NoInput(RequestModel):
    pass


class SetHotMemoryInput(PutHotMemoryRequest):
    type: HotMemoryType
    key: HotMemoryKey


INPUTS: dict[str, type[BaseModel]] = {
    "search_memories": SearchRequest,
    "get_memory_detail": GetMemoryDetailInput,
    "save_user_memory": SaveUserMemoryInput,
    "get_user_context": GetUserContextInput,
    "log_message": LogMessageInput,
    "get_hot_memory": NoInput,
    "set_hot_memory": SetHotMemoryInput,
    "search_reports": ReportSearchRequest,
    "summarize_profile": SummarizeProfileInput,
}


def _input_schema(name: str, lang: Lang, categories: Sequence[str]) -> dict[str, Any]:
    generated = INPUTS[name].model_json_schema(by_alias=False)
    schema: dict[str, Any] = _resolved(generated, generated.pop("$defs", {}))  # a resolved dict is a dict
    schema.pop("title", None)
    schema.pop("description", None)
    schema["additionalProperties"] = False
    for prop_name, prop in schema.get("properties", {}).items():
        prop.pop("title", None)
        prop["description"] = PROPERTY_DESCRIPTIONS[name][prop_name][lang]
    if name == "save_user_memory":  # the tenant's categories (its pack's, or MEMORY_CATEGORIES); none = any text
        schema["properties"]["category"] = {"type": "string", **({"enum": list(categories)} if categories else {}),
                                            "description": PROPERTY_DESCRIPTIONS[name]["category"][lang]}
    return schema


def _resolved(node: Any, definitions: dict[str, Any]) -> Any:
    """The schema with each $ref replaced by what it names: models read tool schemas without resolving."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = {k: v for k, v in definitions[node["$ref"].rsplit("/", 1)[1]].items()
                      if k not in ("title", "description")}  # a model's docstring is for us, not the model
            return _resolved(target, definitions)
        return {k: _resolved(v, definitions) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolved(v, definitions) for v in node]
    return node


def tool_definitions(*, lang: Lang = "en", include: Include = "core", categories: Sequence[str] = ()
                     ) -> list[dict[str, Any]]:
    """Anthropic tool definitions: the four memory tools, or with `include="all"` the extended set too."""
    names = CORE_TOOLS + (EXTENDED_TOOLS if include == "all" else ())
    return [{"name": name, "description": TOOL_DESCRIPTIONS[name][lang],
             "input_schema": _input_schema(name, lang, categories)} for name in names]


def system_prompt(lang: Lang = "en") -> str:
    return SYSTEM_PROMPTS[lang]


class ToolsQuery(RequestModel):
    """GET /v1/tools: the descriptions' language (default: the deployment's TOOLS_LANGUAGE) and whether
    to add the extended tools (log, hot memory, reports, profile) to the four memory tools."""

    lang: Literal["en", "zh"] | None = None
    include: Literal["core", "all"] = "core"


class ToolCatalogue(BaseModel):
    tools: list[dict[str, Any]] = Field(description="Anthropic tool definitions: name, description, input_schema")
    system_prompt: str


# A tool_use id as the Messages API issues and accepts them: echoed into the tool_result, so no other text.
TOOL_USE_ID_PATTERN = r"^[a-zA-Z0-9_-]+$"


class ToolUseBlock(RequestModel):
    type: Literal["tool_use"]
    id: Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=TOOL_USE_ID_PATTERN)]
    name: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    input: dict[str, Any] = Field(default_factory=dict)
    # The Messages API adds cache_control to blocks; accepted and ignored.
    cache_control: dict[str, Any] | None = None


class ToolResultBlock(BaseModel):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool | None = None  # present (true) only on an error, as the Messages API writes it


def _json(model: BaseModel) -> str:
    return model.model_dump_json()


def _validation_message(error: ValidationError) -> str:
    # Named as the tool's schema names them (snake_case), whichever casing the model sent.
    parts = [f"{'.'.join(to_snake(p) if isinstance(p, str) else str(p) for p in e['loc']) or 'input'}: {e['msg']}"
             for e in error.errors(include_url=False, include_input=False)[:5]]
    return "invalid input: " + "; ".join(parts)


class ToolExecutor:
    """Runs one tool call for a user with the services behind the HTTP routes of the same names."""

    def __init__(self, *, save: SaveService, search: SearchService, load: LoadService,
                 summarize: SummarizeService, memory_layers: MemoryLayersService,
                 conversation_log: ConversationLogService) -> None:
        self._save, self._search, self._load, self._summarize = save, search, load, summarize
        self._layers, self._log = memory_layers, conversation_log
        # Each runs (user, arguments, the token subject recorded on what it writes).
        self._runners: dict[str, Callable[[ScopeRef, Any, str | None], str]] = {
            "search_memories": lambda user, i, _: _json(search_memories(self._search, user, i)),
            "get_memory_detail": lambda user, i, _: _json(memory_detail(self._search, user, i.memory_key)),
            "save_user_memory": self._save_memory,
            "get_user_context": lambda user, i, _: _json(LoadContextOutput.of(
                self._load.load_context(user, i.query, i.limit, as_of=i.as_of), i.as_of)),
            "log_message": self._log_message,
            "get_hot_memory": lambda user, _i, _w: _json(HotMemoryView.of(user, self._layers.hot_memory(user))),
            "set_hot_memory": lambda user, i, _: _json(self._layers.put_hot(user, i.type, i.key, i.value, i.priority)),
            "search_reports": lambda user, i, _: _json(ReportList.found(user, self._layers.search_reports(
                user, i.query, i.limit))),
            "summarize_profile": lambda user, i, _: _json(SummarizeOutput.of(
                self._summarize.summarize(user, as_of=i.as_of), i.as_of)),
        }

    def execute(self, user: ScopeRef, block: ToolUseBlock, *, written_by: str | None = None) -> ToolResultBlock:
        """`written_by`: the token subject, recorded on what the tool call writes."""
        runner = self._runners.get(block.name)
        if runner is None:
            return self._error(block, f"unknown tool {block.name!r}; the tools are: {', '.join(self._runners)}")
        try:
            arguments = INPUTS[block.name].model_validate(block.input)
            return ToolResultBlock(tool_use_id=block.id, content=runner(user, arguments, written_by))
        except ValidationError as error:
            return self._error(block, _validation_message(error))
        except (InvalidInput, NotFound) as error:
            return self._error(block, error.message)

    @staticmethod
    def _error(block: ToolUseBlock, message: str) -> ToolResultBlock:
        return ToolResultBlock(tool_use_id=block.id, content=message, is_error=True)

    def _save_memory(self, user: ScopeRef, arguments: SaveUserMemoryInput, written_by: str | None) -> str:
        result = self._save.save(user, NewMemory(memory_type=arguments.memory_type, content=arguments.content,
                                                 category=arguments.category, source="tool",
                                                 origin=Origin.TOOL_EXECUTOR, written_by=written_by))
        return json.dumps({"outcome": result.outcome.value, "memory_key": result.memory.memory_key,
                           "field": result.memory.field,
                           "superseded_key": result.superseded.memory_key if result.superseded else None},
                          ensure_ascii=False)

    def _log_message(self, user: ScopeRef, arguments: LogMessageInput, written_by: str | None) -> str:
        request = LogAppend(messages=[LogEntry(role=arguments.role, content=arguments.content)],
                            extract=arguments.extract)
        return _json(AppendResult.of(user, arguments.conversation_id,
                                     self._log.append(user, arguments.conversation_id, request,
                                                      written_by=written_by)))

