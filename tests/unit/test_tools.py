"""The memory tools: definitions a model can read in English or Chinese, and the executor's answers."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema.validators import Draft202012Validator

from agent_memory.api.tools import ToolExecutor, ToolUseBlock, system_prompt, tool_definitions
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.tools import CORE_TOOLS, EXTENDED_TOOLS, LANGUAGES
from agent_memory.settings import Settings
from tests.fakes.extractor import FakeExtractor
from tests.fakes.services import services_over_fakes

USER = ScopeRef(tenant_id="t", user_id="tool-user")
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _properties(tool: dict) -> dict:
    return tool["input_schema"].get("properties", {})


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_property_of_every_tool_is_described_in_one_casing(lang):
    tools = tool_definitions(lang=lang, include="all")

    assert [t["name"] for t in tools] == [*CORE_TOOLS, *EXTENDED_TOOLS]
    for tool in tools:
        Draft202012Validator.check_schema(tool["input_schema"])
        assert SNAKE_CASE.match(tool["name"]) and tool["description"]
        for name, prop in _properties(tool).items():
            assert SNAKE_CASE.match(name), (tool["name"], name)
            assert prop.get("description"), (tool["name"], name)
        assert "$ref" not in json.dumps(tool), tool["name"]  # models read tool schemas without resolving


def test_english_is_the_default_and_chinese_is_selectable():
    english, chinese = tool_definitions(), tool_definitions(lang="zh")

    assert [t["name"] for t in english] == list(CORE_TOOLS)
    assert not any(CJK.search(t["description"]) for t in english)
    assert not CJK.search(system_prompt("en"))
    assert all(CJK.search(t["description"]) for t in chinese)
    assert CJK.search(system_prompt("zh"))


def test_nothing_internal_reaches_the_model():
    text = json.dumps(tool_definitions(include="all"))

    # Words of our own design documents and of docstrings written for developers.
    internal = ["P" + "RD", "se" + "ed", "Add a member", "model_"]
    assert not [word for word in internal if word in text]


def test_categories_come_from_the_deployment():
    save = next(t for t in tool_definitions(categories=["EB5", "NIW"]) if t["name"] == "save_user_memory")
    free = next(t for t in tool_definitions(categories=[]) if t["name"] == "save_user_memory")

    assert _properties(save)["category"]["enum"] == ["EB5", "NIW"]
    assert "enum" not in _properties(free)["category"]
    assert _properties(save)["memory_type"]["enum"] == ["FACT", "PREFERENCE", "INTENT"]


@pytest.fixture
def executor() -> ToolExecutor:
    return services_over_fakes(Settings(), extractor=FakeExtractor([]), embedder=None).tools


def call(executor: ToolExecutor, name: str, arguments: dict) -> tuple[object, bool]:
    result = executor.execute(USER, ToolUseBlock(type="tool_use", id="toolu_1", name=name, input=arguments))
    assert result.tool_use_id == "toolu_1" and result.type == "tool_result"
    return (result.content if result.is_error else json.loads(result.content)), bool(result.is_error)


def test_a_saved_memory_is_found_by_search_and_read_in_full(executor):
    saved, failed = call(executor, "save_user_memory", {"memory_type": "FACT", "content": "用户32岁，在杭州工作"})
    assert not failed and saved["outcome"] == "created"

    found, _ = call(executor, "search_memories", {"query": "杭州", "search_mode": "keyword"})
    detail, _ = call(executor, "get_memory_detail", {"memory_key": saved["memory_key"]})
    context, _ = call(executor, "get_user_context", {"query": "用户的基本信息"})

    assert [r["memory_key"] for r in found["results"]] == [saved["memory_key"]]
    assert detail["memory"]["content"] == "用户32岁，在杭州工作"
    assert context["total_memories"] == 1


def test_camel_case_arguments_are_accepted_too(executor):
    _, failed = call(executor, "save_user_memory", {"memoryType": "PREFERENCE", "content": "Prefers email"})
    assert not failed


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("search_memory", {"query": "x"}, "unknown tool 'search_memory'; the tools are: search_memories"),
    ("save_user_memory", {"content": "x"}, "invalid input: memory_type: Field required"),
    ("save_user_memory", {"memory_type": "FACT", "content": "x", "category": "ZZZ"}, "category: must be one of"),
    ("search_memories", {"query": "x", "limit": 99}, "limit: Input should be less than or equal to 20"),
    ("search_memories", {"query": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
    ("get_memory_detail", {"memory_key": "mem_0123456789abcdefghjkmnpqrs"}, "not found"),
])
def test_a_mistake_the_model_can_fix_is_an_error_result_saying_what_to_fix(executor, name, arguments, message):
    content, failed = call(executor, name, arguments)

    assert failed
    assert message in str(content)


@pytest.mark.parametrize("tool_use_id", ["toolu_01A09q90qw90lq917835lq9", "call-1", "A_b-9"])
def test_a_tool_use_id_as_the_messages_api_issues_them_is_accepted(tool_use_id):
    assert ToolUseBlock.model_validate({"type": "tool_use", "id": tool_use_id, "name": "get_hot_memory"}).id


@pytest.mark.parametrize("tool_use_id", ["a\x00b", "a\nb", "toolu 1", "<tool_result>", "id\u202e", "工具", ""])
def test_a_tool_use_id_with_other_characters_is_refused_naming_id(tool_use_id):
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as raised:
        ToolUseBlock.model_validate({"type": "tool_use", "id": tool_use_id, "name": "get_hot_memory"})

    assert raised.value.errors()[0]["loc"] == ("id",)


def test_the_system_prompts_score_guidance_names_the_measured_bands_in_both_languages():
    """relevance_score rarely reaches 0.8 (answers score 0.3-0.7 on the short-fact benchmark): the guidance
    names the 0.5 and 0.6 bands it was measured at, and no band scores never reach."""
    from agent_memory.domain.tools import SYSTEM_PROMPTS

    for prompt in SYSTEM_PROMPTS.values():
        assert "0.5" in prompt and "0.6" in prompt
        assert "0.8" not in prompt and "0.6-0.8" not in prompt
