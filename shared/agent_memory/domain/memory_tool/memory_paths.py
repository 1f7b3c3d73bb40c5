"""Memory-tool paths: what Claude's memory tool may name, in one canonical spelling.

Every path lives under ``/memories``. A path is refused (``MemoryPathError``, whose message is written
for the model) when it could name anything else, or name one thing in two ways:

* not ``/memories`` or below it (``/etc/passwd``, ``//memories``, ``/memoriesX/a``, ``C:\\x``, ``~/x``);
* a ``..`` segment, also percent-decoded any number of times (``%2e%2e``, ``%252e%252e``,
  ``%25252e%25252e``): a layer that decodes the path (a proxy, a client mirroring the files to disk) would
  see the traversal;
* a backslash, a control, format or invisible character (NUL, newline, right-to-left override, zero-width
  space, no-break space, Hangul filler), or a look-alike of ``/``, ``\\`` or ``.`` (full-width ``．．／``,
  division slash ``∕``, fraction slash ``⁄``, rising diagonal ``⟋``, one-dot leader ``․``, ideographic full
  stop ``。``, and every other confusable of the three in Unicode's confusables data: ``᜵``, ``ꓸ``), also
  percent-encoded: shown to a person, the path would read as another one. The middle dots
  ``·`` and ``・`` and the slash-like letters ``ノ`` and ``丿`` are refused too, except within a word of
  their own scripts (``约翰·史密斯``, ``ノート``), where they read as what they are;
* a segment made only of dots, with leading or trailing whitespace, ending in a dot, starting with ``~``
  or a drive letter (``C:``), or a reserved device name (``CON``, ``NUL``, ``COM1``...): a client that
  mirrors the files onto a Windows or POSIX disk would resolve it elsewhere or not at all;
* longer than ``MAX_PATH_CHARS`` characters (or ``MAX_PATH_BYTES`` in UTF-8), a segment longer than
  ``MAX_SEGMENT_CHARS``, or more than ``MAX_DEPTH`` segments below ``/memories``.

Harmless spellings are normalised, as the filesystem the tool was designed on reads them: a trailing
``/``, repeated ``/`` after ``/memories`` and ``.`` segments are dropped (the tool's own directory listing
of ``/memories/`` prints ``/memories//notes.md``), and the text is put in Unicode NFC, so two encodings of
one name are one file. Names in any script are welcome: ``/memories/客户/张三.md``.

The store holds no links and no device files, so no name can point anywhere else.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

ROOT = "/memories"
MAX_PATH_CHARS = 255
# A DynamoDB sort key holds at most 1024 bytes; the store prefixes the path and may append '/'.
MAX_PATH_BYTES = 1000
MAX_SEGMENT_CHARS = 100
MAX_DEPTH = 8

_SHOWN_CHARS = 200
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Letters that render as nothing: a name holding one reads as a different name.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
# Characters a reader takes for '/', '\' or '.': NFKC folds some of them, not all.
_LOOKALIKES = frozenset(
    "\uff0f\u2215\u2044\u29f8\u2571\u27cb\u2f03\u31d3\u0337\u0338"  # slashes
    "\uff3c\ufe68\u2216\u29f5\u29f9\u27cd"  # backslashes
    "\uff0e\u2024\u2025\ufe52\u3002\uff61\u2027\u2219\u22c5\u2e31\u0589\u06d4\u0701\u0702\uff65"  # dots
    # Unicode's confusables (confusables.txt) of '/', '\\' and '.' besides those above.
    "\u1735\u2041\u2cc6\u2cc7\u3033\U0001d23a"
    "\u2f02\u31d4\U0001d20f\U0001d23b"
    "\ua4f8\ua60e\U00010a50\U0001d16d"
)
# Look-alikes that are also a script's own middle dot, letter or digit: accepted only next to letters (or
# digits) of their own script, on both sides for a dot (约翰·史密斯), on one side for a letter (ノート, 丶) or a digit
# (٢٠٢٤); alone or among Latin letters they read as '.', '/' or '\\'.
_EAST_ASIAN_NAMES = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")
_ARABIC_NAMES = ("ARABIC", "EXTENDED ARABIC")
_WORD_ONLY_NEIGHBOURS: dict[str, tuple[int, tuple[str, ...]]] = {
    "\u00b7": (2, _EAST_ASIAN_NAMES), "\u30fb": (2, _EAST_ASIAN_NAMES), "\u30ce": (1, _EAST_ASIAN_NAMES),
    "\u4e3f": (1, _EAST_ASIAN_NAMES), "\u4e36": (1, _EAST_ASIAN_NAMES),
    "\u0660": (1, _ARABIC_NAMES), "\u06f0": (1, _ARABIC_NAMES)}
_DRIVE = re.compile(r"^[A-Za-z]:")
_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{n}" for port in ("COM", "LPT") for n in "123456789¹²³"}
)


class MemoryPathError(ValueError):
    """A refused memory-tool path. The message names the path and says what to write instead."""


def shown(path: str) -> str:
    """The path as an error message may echo it: invisible characters spelled out, the length capped."""
    visible = "".join(f"\\u{ord(c):04x}" if _is_hidden(c) else c for c in path)
    return visible if len(visible) <= _SHOWN_CHARS else visible[:_SHOWN_CHARS] + "…"


def memory_path(raw: str) -> str:
    """The canonical form of `raw` (``/memories`` or ``/memories/<segment>/...``), or MemoryPathError."""
    if len(raw) > MAX_PATH_CHARS:
        raise MemoryPathError(f"Path {shown(raw)} is {len(raw)} characters long; the limit is {MAX_PATH_CHARS}.")
    # The tool's own wording for a path elsewhere, so the model reads what it was trained on.
    if not raw.startswith(ROOT):
        raise MemoryPathError(f"Path must start with {ROOT}, got: {shown(raw)}")
    _check_characters(raw, raw, encoded=False)
    for decoded in _percent_decodings(raw):
        _check_characters(decoded, raw, encoded=True)
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        raise MemoryPathError(f"Path {shown(raw)} is outside {ROOT}: write {ROOT} or {ROOT}/<name>.")
    segments = _segments(raw)
    for segment in segments:
        _check_segment(segment, raw)
    if len(segments) > MAX_DEPTH:
        raise MemoryPathError(
            f"Path {shown(raw)} is {len(segments)} directories deep; the limit is {MAX_DEPTH} below {ROOT}.")
    canonical = unicodedata.normalize("NFC", "/".join([ROOT, *segments]))
    size = len(canonical.encode("utf-8"))
    if len(canonical) > MAX_PATH_CHARS or size > MAX_PATH_BYTES:
        raise MemoryPathError(f"Path {shown(raw)} is too long ({size} bytes in UTF-8); the limit is "
                              f"{MAX_PATH_CHARS} characters and {MAX_PATH_BYTES} bytes.")
    return canonical


def parent_of(path: str) -> str:
    """The directory holding a canonical path (``/memories`` for a top-level name)."""
    return path.rsplit("/", 1)[0] if path != ROOT else ROOT


def ancestors(path: str) -> list[str]:
    """The directories between ``/memories`` (excluded) and `path` (excluded), nearest first."""
    found: list[str] = []
    current = parent_of(path)
    while current != ROOT:
        found.append(current)
        current = parent_of(current)
    return found


def is_within(path: str, directory: str) -> bool:
    """True when `path` is strictly below `directory` (both canonical)."""
    return path.startswith(directory + "/")


def _is_hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return category in _BAD_CATEGORIES or (category == "Zs" and char != " ") or char in _INVISIBLE


def _percent_decodings(raw: str) -> list[str]:
    """The path decoded again and again while that changes it (``%25252e`` -> ``%252e`` -> ``%2e`` -> ``.``).
    Each pass shortens the text, so a path of 255 characters decodes at most 85 times."""
    decodings: list[str] = []
    text = raw
    while "%" in text:
        decoded = unquote(text, errors="replace")
        if decoded == text:
            break
        decodings.append(decoded)
        text = decoded
    return decodings


def _check_characters(text: str, raw: str, *, encoded: bool) -> None:
    how = "a percent-encoded " if encoded else "a "
    for index, char in enumerate(text):
        if _is_hidden(char):
            raise MemoryPathError(f"Path {shown(raw)} contains {how}control or invisible character "
                                  f"(U+{ord(char):04X}); use visible characters only.")
        if char == "\\":
            raise MemoryPathError(f"Path {shown(raw)} contains {how}backslash; separate directories with '/'.")
        if char in _LOOKALIKES or (char in _WORD_ONLY_NEIGHBOURS and not _within_a_word(text, index)):
            raise MemoryPathError(f"Path {shown(raw)} contains {how}character that looks like '/', '\\' or '.' "
                                  f"(U+{ord(char):04X}); use plain '/' and '.'.")
    if encoded and any(_only_dots(segment) for segment in text.split("/")):
        raise MemoryPathError(f"Path {shown(raw)} contains a percent-encoded '..' segment; write the path "
                              f"without percent-encoding and without '..'.")


def _within_a_word(text: str, index: int) -> bool:
    """Whether the dot, letter or digit at `index` has as many letters (or digits) of its script beside it as it
    needs."""
    needed, scripts = _WORD_ONLY_NEIGHBOURS[text[index]]
    beside = [text[i] for i in (index - 1, index + 1) if 0 <= i < len(text)]
    return sum(_of_script(char, scripts) for char in beside) >= needed


def _of_script(char: str, scripts: tuple[str, ...]) -> bool:
    return (unicodedata.category(char)[0] in "LN" and char not in _WORD_ONLY_NEIGHBOURS
            and unicodedata.name(char, "").startswith(scripts))


def _segments(raw: str) -> list[str]:
    """The names below /memories, with empty and '.' segments dropped; '..' refused."""
    parts = [part for part in raw[len(ROOT):].split("/") if part not in ("", ".")]
    if ".." in parts:
        depth, lowest = 0, 0
        for part in parts:
            depth += -1 if part == ".." else 1
            lowest = min(lowest, depth)
        if lowest < 0:  # the tool's own wording for an escape
            raise MemoryPathError(f"Path {shown(raw)} would escape {ROOT} directory")
        raise MemoryPathError(f"Path {shown(raw)} contains '..'; name the directory directly instead.")
    return parts


def _only_dots(segment: str) -> bool:
    folded = unicodedata.normalize("NFKC", segment)
    return folded != "" and set(folded) == {"."} and folded != "."


def _check_segment(segment: str, raw: str) -> None:
    folded = unicodedata.normalize("NFKC", segment)
    problem = None
    if len(segment) > MAX_SEGMENT_CHARS:
        problem = f"has a name of {len(segment)} characters; the limit is {MAX_SEGMENT_CHARS}"
    elif set(folded) <= {"."} or "/" in folded or "\\" in folded:
        problem = f"has the name '{shown(segment)}', which reads as a path of its own"
    elif segment != segment.strip():
        problem = f"has the name '{segment}' with leading or trailing whitespace"
    elif segment.endswith("."):
        problem = f"has the name '{segment}' ending in '.'"
    elif segment.startswith("~"):
        problem = f"has the name '{segment}' starting with '~' (home directories are not supported)"
    elif _DRIVE.match(segment):
        problem = f"has the name '{segment}', which starts like a drive letter"
    elif segment.split(".")[0].strip().upper() in _DEVICE_NAMES:
        problem = f"has the name '{segment}', a reserved device name"
    if problem:
        raise MemoryPathError(f"Path {shown(raw)} {problem}; choose another name.")
