"""Memory-tool paths: every way out of /memories is refused, names in any script are kept, and one file has
one spelling."""

from __future__ import annotations

from urllib.parse import quote

import confusables
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.memory_tool.memory_paths import (
    MAX_DEPTH,
    MAX_PATH_CHARS,
    MAX_SEGMENT_CHARS,
    ROOT,
    MemoryPathError,
    ancestors,
    is_within,
    memory_path,
    parent_of,
    shown,
)

ESCAPES = [
    # plain traversal
    "/memories/..", "/memories/../", "/memories/../etc/passwd", "/memories/a/../../etc", "/memories/./../x",
    "/memories/a/../b", "/memories/a/b/../../../root", "/memories/...", "/memories/a/.../b", "../memories",
    "..", "../", "/memories/..\\..\\etc",
    # percent-encoded, once and twice
    "/memories/%2e%2e/etc", "/memories/%2E%2E/etc", "/memories/..%2f..%2fetc", "/memories/a%2f..%2f..%2fetc",
    "/memories/%2e%2e%2fetc", "/memories/%252e%252e/etc", "/memories/%252e%252e%252fetc", "/memories/.%2e/x",
    "/memories/%2e./x", "/memories/a%5c..%5cb", "/memories/a%00.md", "/memories/%250a", "%2e%2e/memories",
    # backslashes and drive letters
    "\\memories\\a.md", "/memories\\..\\etc", "/memories/a\\b.md", "C:\\Windows\\system.ini", "C:/memories/a",
    "/memories/C:/a.md", "/memories/c:", "/memories/a/D:evil",
    # elsewhere, or only named like /memories
    "/etc/passwd", "//memories", "//memories/a.md", "///memories", "/memoriesX/a", "/memories-evil/a",
    "/memories.md", "/Memories/a.md", "memories/a.md", "", "/", "~/memories", "/memories/~", "/memories/~root/a",
    " /memories/a.md", "file:///memories/a.md", "\\\\server\\memories",
    # control, format and invisible characters
    "/memories/a\x00.md", "/memories/\x00", "/memories/a\n.md", "/memories/a\r", "/memories/a\tb",
    "/memories/\x1b[31m", "/memories/\x7f", "/memories/a\u202emd.exe", "/memories/\u202e", "/memories/a\u200bb",
    "/memories/\u200d", "/memories/\ufeffa.md", "/memories/a\u2028b", "/memories/a\u00a0b", "/memories/\u3000",
    "/memories/\u3164", "/memories/a\u2066b", "/memories/\ud800", "/memories/\ue000",
    # look-alikes of '.', '/' and '\'
    "/memories/．．／etc", "/memories/．．", "/memories/a／b", "/memories/..／etc", "/memories/\u2215etc",
    "/memories/..\u2215..\u2215etc", "/memories/\u2044etc", "/memories/\u29f8etc", "/memories/\uff3cetc",
    "/memories/\ufe68", "/memories/\u2024\u2024", "/memories/\u2025", "/memories/\ufe52\ufe52", "/memories/\u2026",
    # names a mirroring disk would resolve elsewhere
    "/memories/ a.md", "/memories/a.md ", "/memories/a.", "/memories/CON", "/memories/nul.md", "/memories/com1.txt",
    "/memories/LPT9", "/memories/dir/aux.json",
    # too long, too deep
    "/memories/" + "a" * 300, "/memories/" + "a" * (MAX_SEGMENT_CHARS + 1),
    "/memories/" + "/".join(["d"] * (MAX_DEPTH + 1)), "/memories/" + "/".join(["abcdefghij"] * 30),
    "/memories/" + "😀" * 245, "/memories/" + "/" * 300,
]


@pytest.mark.parametrize("raw", ESCAPES, ids=lambda raw: shown(raw)[:40])
def test_a_path_that_could_leave_memories_or_read_as_another_is_refused(raw):
    with pytest.raises(MemoryPathError) as refused:
        memory_path(raw)
    message = str(refused.value)
    assert message
    assert not any(char in message for char in "\x00\n\r\u202e\u200b\ufeff")  # echoed visibly, never raw


def test_the_corpus_is_large_and_has_no_duplicates():
    assert len(ESCAPES) >= 40
    assert len(set(ESCAPES)) == len(ESCAPES)


@pytest.mark.parametrize(("raw", "canonical"), [
    ("/memories", "/memories"),
    ("/memories/", "/memories"),
    ("/memories/notes.md", "/memories/notes.md"),
    ("/memories/客户.md", "/memories/客户.md"),
    ("/memories/客户/张三/偏好.md", "/memories/客户/张三/偏好.md"),
    ("/memories/projects/alpha/plan v2.md", "/memories/projects/alpha/plan v2.md"),
    ("/memories/notes/", "/memories/notes"),
    ("/memories//notes.md", "/memories/notes.md"),  # as the tool's own listing of "/memories/" prints it
    ("/memories/./a/./b.md", "/memories/a/b.md"),
    ("/memories/.hidden", "/memories/.hidden"),
    ("/memories/100%.md", "/memories/100%.md"),
    ("/memories/a%2fb.md", "/memories/a%2fb.md"),  # kept literally; decoded it is no traversal
    ("/memories/10:30 meeting.md", "/memories/10:30 meeting.md"),
    ("/memories/console.md", "/memories/console.md"),
    ("/memories/Cafe\u0301.md", "/memories/Café.md"),  # NFC: one name, one file
    ("/memories/日本語/한국어/русский.txt", "/memories/日本語/한국어/русский.txt"),
    ("/memories/a…b.md", "/memories/a…b.md"),
    ("/memories/" + "/".join(["d"] * MAX_DEPTH), "/memories/" + "/".join(["d"] * MAX_DEPTH)),
    ("/memories/" + "a" * MAX_SEGMENT_CHARS, "/memories/" + "a" * MAX_SEGMENT_CHARS),
])
def test_a_path_inside_memories_is_kept_in_its_canonical_spelling(raw, canonical):
    assert memory_path(raw) == canonical


def test_the_tool_wording_is_kept_for_a_path_elsewhere_and_for_an_escape():
    with pytest.raises(MemoryPathError, match=r"^Path must start with /memories, got: /etc/passwd$"):
        memory_path("/etc/passwd")
    with pytest.raises(MemoryPathError, match=r"^Path /memories/\.\./etc would escape /memories directory$"):
        memory_path("/memories/../etc")


def test_a_refusal_names_the_invisible_character_it_found():
    with pytest.raises(MemoryPathError, match=r"U\+202E"):
        memory_path("/memories/a\u202emd")


def test_the_path_helpers_walk_the_canonical_tree():
    assert parent_of("/memories/a/b.md") == "/memories/a"
    assert parent_of("/memories/a") == ROOT
    assert ancestors("/memories/a/b/c.md") == ["/memories/a/b", "/memories/a"]
    assert ancestors("/memories/top.md") == []
    assert is_within("/memories/a/b", "/memories/a")
    assert not is_within("/memories/ab", "/memories/a")
    assert not is_within("/memories/a", "/memories/a")


segment_chars = st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs", "M"])


@given(st.lists(st.text(segment_chars, min_size=1, max_size=12), min_size=1, max_size=4))
def test_any_accepted_path_is_canonical_stays_inside_and_has_no_traversal(segments):
    try:
        canonical = memory_path("/memories/" + "/".join(segments))
    except MemoryPathError:
        return
    assert memory_path(canonical) == canonical
    assert canonical == ROOT or canonical.startswith(ROOT + "/")
    parts = canonical.split("/")[2:]
    assert all(part not in ("", ".", "..") and "\\" not in part for part in parts)
    assert len(canonical) <= MAX_PATH_CHARS


# Look-alikes of '/', '\' and '.' from every corner of Unicode, each where it would read as path syntax.
LOOKALIKES = [
    "\u27cb", "\u30ce", "\u00b7", "\u3002", "\u2024", "\uff0e", "\u2215", "\u2044", "\uff0f", "\u29f8", "\ufe52",
    "\u2571", "\u27cd", "\u2f03", "\u31d3", "\u4e3f", "\u0338", "\uff3c", "\u2216", "\uff61", "\u2027", "\u2219",
    "\u22c5", "\u2e31", "\u30fb", "\uff65", "\u0589", "\u06d4", "\u0701", "\u0702", "\u2025",
]
# Every confusable of '/', '\\' and '.' in Unicode's confusables data (the `confusables` package's copy).
UNICODE_CONFUSABLES = sorted({char for target in "/\\." for char in confusables.confusable_characters(target)
                              if len(char) == 1 and char != target})


@pytest.mark.parametrize("char", sorted({*LOOKALIKES, *UNICODE_CONFUSABLES}), ids=lambda char: f"U+{ord(char):04X}")
@pytest.mark.parametrize("spelling", ["/memories/{c}{c}/etc", "/memories/a{c}b.md", "/memories/{c}",
                                      "/memories/notes{c}md", "/memories/{c}{c}{c}"])
def test_a_look_alike_of_a_slash_or_dot_is_refused_where_it_reads_as_one(char, spelling):
    with pytest.raises(MemoryPathError, match=f"U\\+{ord(char):04X}"):
        memory_path(spelling.format(c=char))


@pytest.mark.parametrize("char", LOOKALIKES, ids=lambda char: f"U+{ord(char):04X}")
def test_a_look_alike_percent_encoded_up_to_three_times_is_refused(char):
    once = quote(char)
    for encoded in (once, quote(once), quote(quote(once))):
        with pytest.raises(MemoryPathError):
            memory_path(f"/memories/a{encoded}b/{encoded}{encoded}")


@pytest.mark.parametrize("raw", ["/memories/%25252e%25252e/etc", "/memories/%2525252e%2525252e",
                                 "/memories/a%25252f%25252e%25252e%25252fetc", "/memories/%25255c"])
def test_a_traversal_percent_encoded_three_times_or_more_is_refused(raw):
    with pytest.raises(MemoryPathError, match="percent-encoded"):
        memory_path(raw)


@pytest.mark.parametrize("raw", ["/memories/客户/约翰·史密斯.md", "/memories/ノート.md",
                                 "/memories/メモ/ジョン・スミス.md", "/memories/テノール.md", "/memories/丿部.md",
                                 "/memories/100%25.md", "/memories/丶部.md", "/memories/تقرير ٢٠٢٤.md",
                                 "/memories/گزارش ۱۴۰۳.md"])
def test_a_middle_dot_or_slash_like_letter_inside_a_word_of_its_script_is_kept(raw):
    assert memory_path(raw) == raw
