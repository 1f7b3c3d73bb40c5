"""The token estimator: ranges against Claude's counts, the Messages API shapes, and its invariants.

The reference counts below come from ctok 1.3.0 (the benchmark's reference, see benchmarks/tokens.py) for
claude-3 (ctok "3.0") and claude-4.7 (ctok "4.8"); the API_COUNTS are count_tokens results published by a
third party (the ah-ah-ah project's fixtures, March 2026, a claude-3-family model).
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.text.tokens import (
    BLOCK_OVERHEAD_TOKENS,
    DEFAULT_FAMILY,
    FAMILIES,
    FLAT_TOKENS_PER_CHAR,
    IMAGE_FLAT_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    PDF_PAGE_TOKENS,
    estimate_content_tokens,
    estimate_image_tokens,
    estimate_joined_tokens,
    estimate_message_tokens,
    estimate_system_tokens,
    estimate_tokens,
    family_for_model,
    image_size,
    text_counts,
)

# text -> (claude-3 tokens, claude-4.7 tokens), content only
REFERENCE = {
    "我今天去公园散步，天气很好。": (15, 14),
    "用户喜欢在周末去爬山，最近在准备马拉松比赛。": (28, 27),
    "我在 Google 工作了 3 年，最近在学 Python。": (21, 22),
    "用户的邮箱是 alice@example.com，电话 138-0000-1234。": (27, 27),
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.": (19, 29),
    "Melanie: That's great! I painted a sunrise last year, and I still love how the colors came out.": (25, 31),
    '{"name": "search_memory", "input": {"query": "hiking plans", "limit": 5}}': (24, 32),
}
API_COUNTS = {
    "Hello, world!": 4,
    "The quick brown fox jumps over the lazy dog.": 11,
    "こんにちは世界": 7,
    '{"name": "test", "values": [1, 2, 3], "nested": {"key": "value"}}': 28,
    "The price is $42.99 for 3 items (total: $128.97).": 21,
}
ENGLISH = (
    "Caroline: Hey Mel! Good to see you! How have you been? Melanie: Hey Caroline! Good to see you! I'm swamped "
    "with the kids & work. What's up with you? Anything new? Caroline: I went to a LGBTQ support group yesterday "
    "and it was so powerful. The transgender stories were so inspiring! I was so happy and thankful for all the "
    "support. Melanie: Wow, that's cool, Caroline! What happened that was so awesome?"
)


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return base64.b64encode(header + b"\x08\x06\x00\x00\x00" + b"\x00" * 64).decode()


def _jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0\x00\x11\x08" + height.to_bytes(2, "big") + width.to_bytes(2, "big") + b"\x03" + b"\x00" * 9
    return base64.b64encode(b"\xff\xd8" + app0 + sof0 + b"\xff\xda" + b"\x00" * 32).decode()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("text", "counts"), list(REFERENCE.items()))
def test_estimates_land_within_20_percent_of_claudes_count(text, counts, family):
    reference = counts[FAMILIES.index(family)]
    assert abs(estimate_tokens(text, family=family) - reference) <= max(2, 0.2 * reference)


@pytest.mark.parametrize(("text", "count"), list(API_COUNTS.items()))
def test_estimates_are_near_published_count_tokens_results(text, count):
    assert abs(estimate_tokens(text, family="claude-3") - count) <= max(2, 0.25 * count)


@pytest.mark.parametrize("family", FAMILIES)
def test_chinese_is_about_one_token_per_character_not_two(family):
    text = "用户喜欢在周末去爬山，最近在准备马拉松比赛。"
    per_char = estimate_tokens(text, family=family) / len(text)
    assert 1.0 <= per_char <= 1.5
    assert per_char < FLAT_TOKENS_PER_CHAR


def test_common_han_characters_cost_one_token_and_rare_ones_their_bytes():
    assert text_counts("我你好").cjk_tokens == 3  # all three are single tokens
    assert text_counts("嘿").cjk_tokens == 3  # no token: three UTF-8 bytes, no two-byte prefix token either
    assert text_counts("吗").cjk_tokens == 2  # a two-byte prefix token plus one byte
    assert text_counts("，。？！").cjk_tokens == 4  # full-width punctuation


@pytest.mark.parametrize("family", FAMILIES)
def test_english_is_far_below_two_tokens_per_character(family):
    per_char = estimate_tokens(ENGLISH, family=family) / len(ENGLISH)
    assert 0.2 <= per_char <= 0.4  # ~4 (claude-3) and ~3 (claude-4.7) characters per token


def test_the_newer_family_counts_english_higher_and_chinese_the_same():
    chinese = "我今天去公园散步，天气很好。用户喜欢在周末去爬山。"
    assert estimate_tokens(ENGLISH, family="claude-4.7") > 1.25 * estimate_tokens(ENGLISH, family="claude-3")
    assert abs(estimate_tokens(chinese, family="claude-4.7") - estimate_tokens(chinese, family="claude-3")) <= 2


@pytest.mark.parametrize("family", FAMILIES)
def test_mixed_text_costs_about_its_parts_plus_the_spaces_between_scripts(family):
    mixed = "我在 Google 工作了 3 年，最近在学 Python。"
    counts = text_counts(mixed)
    assert counts.cjk_chars == 12 and counts.words == 2 and counts.bare_spaces == 5
    chinese_only = "我在工作了年，最近在学。"
    assert estimate_tokens(mixed, family=family) > estimate_tokens(chinese_only, family=family) + 4


def test_empty_inputs_cost_nothing_and_any_text_costs_something():
    assert estimate_tokens("") == 0
    assert estimate_tokens(" ") >= 1
    assert estimate_message_tokens([]) == 0
    assert estimate_system_tokens("") == estimate_system_tokens([]) == estimate_system_tokens(None) == 0
    assert estimate_content_tokens(None) == estimate_content_tokens([]) == 0
    assert estimate_message_tokens([{"role": "user", "content": ""}]) == MESSAGE_OVERHEAD_TOKENS
    assert estimate_message_tokens([{"role": "user", "content": []}]) == MESSAGE_OVERHEAD_TOKENS


def test_the_default_family_is_the_newer_one_unless_the_model_says_otherwise():
    assert estimate_tokens(ENGLISH) == estimate_tokens(ENGLISH, family=DEFAULT_FAMILY)
    assert DEFAULT_FAMILY == "claude-4.7"


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-haiku-4-5", "claude-3"),
        ("claude-haiku-4-5-20251001", "claude-3"),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-3"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-3"),
        ("claude-sonnet-4-20250514", "claude-3"),
        ("claude-3-5-sonnet-20240620", "claude-3"),
        ("claude-3-opus-20240229", "claude-3"),
        ("claude-opus-4-6", "claude-3"),
        ("claude-opus-4-7", "claude-4.7"),
        ("claude-opus-4-8", "claude-4.7"),
        ("claude-sonnet-5", "claude-4.7"),
        ("something-else", DEFAULT_FAMILY),
        (None, DEFAULT_FAMILY),
    ],
)
def test_family_for_model(model, family):
    assert family_for_model(model) == family


def test_a_conversation_is_its_messages_plus_their_framing():
    messages = [
        {"role": "user", "content": "我下周要去东京出差，帮我记一下。"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted: a business trip to Tokyo next week."}]},
    ]
    expected = sum(MESSAGE_OVERHEAD_TOKENS + estimate_content_tokens(m["content"]) for m in messages)
    assert estimate_message_tokens(messages) == expected
    assert estimate_message_tokens(messages, family="claude-3") < estimate_message_tokens(messages)


def test_tool_use_and_tool_result_blocks_are_priced_as_name_json_input_and_content():
    tool_input = {"query": "东京 出差", "limit": 5}
    use = {"type": "tool_use", "id": "toolu_01A", "name": "search_memory", "input": tool_input}
    result_text = "1. 用户下周去东京出差 (2024-05-01)"
    result = {"type": "tool_result", "tool_use_id": "toolu_01A", "content": result_text}
    result_blocks = {"type": "tool_result", "tool_use_id": "toolu_01A",
                     "content": [{"type": "text", "text": result_text}]}
    messages = [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]

    use_tokens = (BLOCK_OVERHEAD_TOKENS + estimate_tokens("search_memory")
                  + estimate_tokens(json.dumps(tool_input, ensure_ascii=False)))
    result_tokens = BLOCK_OVERHEAD_TOKENS + estimate_tokens(result_text)
    assert estimate_content_tokens([use]) == use_tokens
    assert estimate_content_tokens([result]) == estimate_content_tokens([result_blocks]) == result_tokens
    assert estimate_message_tokens(messages) == 2 * MESSAGE_OVERHEAD_TOKENS + use_tokens + result_tokens


def test_images_follow_anthropics_formula_when_the_size_is_known_and_cost_the_maximum_when_not():
    def image(source: dict) -> list[dict]:
        return [{"type": "image", "source": source}]

    assert estimate_image_tokens(200, 150) == 40  # 200 * 150 / 750
    assert estimate_image_tokens(4000, 3000) == 1600  # scaled down to the cap
    assert estimate_content_tokens(image({"type": "base64", "media_type": "image/png", "data": _png(300, 200)})) == 80
    assert estimate_content_tokens(image({"type": "base64", "media_type": "image/jpeg",
                                          "data": _jpeg(640, 480)})) == 410
    assert estimate_content_tokens(image({"type": "url", "url": "https://example.com/cat.png"})) == IMAGE_FLAT_TOKENS
    assert estimate_content_tokens(image({"type": "base64", "media_type": "image/png", "data": "not base64!"})) == (
        IMAGE_FLAT_TOKENS)
    in_result = {"type": "tool_result", "tool_use_id": "t", "content": image({"type": "url", "url": "https://x"})}
    assert estimate_content_tokens([in_result]) == BLOCK_OVERHEAD_TOKENS + IMAGE_FLAT_TOKENS


def test_image_size_reads_png_jpeg_and_gif_headers():
    assert image_size(_png(1920, 1080)) == (1920, 1080)
    assert image_size(_jpeg(640, 480)) == (640, 480)
    assert image_size(base64.b64encode(b"GIF89a" + (32).to_bytes(2, "little") + (16).to_bytes(2, "little")).decode()
                      ) == (32, 16)
    assert image_size(base64.b64encode(b"plain text, not an image").decode()) is None


def test_documents_price_text_sources_as_text_and_pdfs_per_page():
    text = "会议纪要：下周三上午十点讨论预算。"
    text_doc = {"type": "document", "title": "Notes", "source": {"type": "text", "media_type": "text/plain",
                                                                  "data": text}}
    assert estimate_content_tokens([text_doc]) == BLOCK_OVERHEAD_TOKENS + estimate_tokens("Notes") + estimate_tokens(
        text)
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>\n"
    pdf_doc = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                              "data": base64.b64encode(pdf).decode()}}
    assert estimate_content_tokens([pdf_doc]) == BLOCK_OVERHEAD_TOKENS + 2 * PDF_PAGE_TOKENS
    url_doc = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}
    assert estimate_content_tokens([url_doc]) == BLOCK_OVERHEAD_TOKENS + PDF_PAGE_TOKENS


def test_system_prompts_are_strings_or_text_blocks_with_one_turns_framing():
    system = "You are a memory assistant. 用中文回答。"
    assert estimate_system_tokens(system) == MESSAGE_OVERHEAD_TOKENS + estimate_tokens(system)
    blocks = [{"type": "text", "text": system}, {"type": "text", "text": "Be brief.", "cache_control": {"type": "x"}}]
    assert estimate_system_tokens(blocks) == MESSAGE_OVERHEAD_TOKENS + estimate_tokens(system) + estimate_tokens(
        "Be brief.")


def test_unknown_blocks_and_malformed_messages_are_priced_as_their_json_not_rejected():
    block = {"type": "search_result", "source": "https://example.com", "title": "Tokyo", "content": []}
    assert estimate_content_tokens([block]) == estimate_tokens(json.dumps(block, ensure_ascii=False))
    assert estimate_message_tokens(["not a message"]) == MESSAGE_OVERHEAD_TOKENS + estimate_tokens('"not a message"')


@pytest.mark.parametrize("family", FAMILIES)
def test_longer_text_never_costs_less(family):
    words = ENGLISH.split(" ")
    estimates = [estimate_tokens(" ".join(words[:n]), family=family) for n in range(1, len(words) + 1)]
    assert estimates == sorted(estimates)
    chinese = "我今天去公园散步，天气很好。用户喜欢在周末去爬山，最近在准备马拉松比赛。"
    estimates = [estimate_tokens(chinese[:n], family=family) for n in range(1, len(chinese) + 1)]
    assert estimates == sorted(estimates)


@given(st.text(max_size=200), st.text(max_size=200), st.sampled_from(FAMILIES))
def test_joining_two_texts_costs_at_least_either(first, second, family):
    joined = estimate_tokens(first + "\n" + second, family=family)
    assert joined >= max(estimate_tokens(first, family=family), estimate_tokens(second, family=family))


@given(st.text(max_size=300))
def test_counts_are_never_negative(text):
    assert all(count >= 0 for count in text_counts(text))


@given(st.lists(st.text(alphabet=st.sampled_from(list("aB1 \t\n\r.,!中国あ한😀é9Z☀")), max_size=8), max_size=6))
def test_the_joined_estimate_from_each_texts_counts_is_the_estimate_of_the_texts_joined_by_line_breaks(texts):
    assert estimate_joined_tokens(texts) == estimate_tokens("\n".join(texts))
