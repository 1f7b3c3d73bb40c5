"""Cheap, calibrated token estimates for Claude: text, Messages API arrays and system prompts.

estimate_tokens(text) prices what drives Claude's tokenizer (CJK characters exactly, Latin text from word,
letter, case, punctuation and line-break counts at fitted RATES) in pure Python with no vocabulary, model
or I/O; the Messages API helpers add per-message and per-block framing, images and documents. Two
tokenizer families: "claude-3" (Claude 3 through Opus 4.6) and "claude-4.7" (Opus 4.7 and later, the
DEFAULT_FAMILY, as its larger counts are the safe side for a budget); family_for_model() picks one.

How each part is priced, where the numbers come from and the measured error: docs/token-estimation.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from agent_memory.domain.text.cjk_tokens import cjk_cost

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

FLAT_TOKENS_PER_CHAR = 2.0  # a flat 2 tokens per character, the rule this replaces: kept for the benchmark only
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


# The texts whose counts are kept: a user's memories are counted once, not at every version of their joined text.
COUNTED_TEXTS_KEPT = 65536


@lru_cache(maxsize=COUNTED_TEXTS_KEPT)
def _kept_counts(text: str) -> TextCounts:
    return text_counts(text)


def estimate_joined_tokens(texts: Sequence[str], *, family: TokenizerFamily = DEFAULT_FAMILY) -> int:
    """estimate_tokens("\n".join(texts)), from each text's counts (kept per text, so that a new version of a
    user's memories counts only its new ones). Every count of texts joined by line breaks is the sum of theirs
    (a line break is no letter, digit, space or punctuation, and ends every run of those), but for the runs of
    line breaks: a joiner starts one unless a line break comes just before it, and a text's leading line break
    joins the joiner's run."""
    if not texts or (len(texts) == 1 and not texts[0]):  # joined: ""
        return 0
    totals = [sum(column) for column in zip(*map(_kept_counts, texts), strict=True)]
    runs = 0
    after_newline = False  # whether the byte before the next joiner or text is a line break
    for i, text in enumerate(texts):
        if i:
            runs += not after_newline
            after_newline = True
        if text:
            runs -= after_newline and text[0] in "\r\n"
            after_newline = text[-1] in "\r\n"
    counts = TextCounts(*totals)._replace(newline_runs=totals[TextCounts._fields.index("newline_runs")] + runs)
    return max(1, int(price(counts, RATES[family]) + 0.5))


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
