"""Bring a mem0 export in: what mem0's `get_all` answered, saved as JSON, into agent-memory, one user per mem0 user.

    python -m agent_memory_client.import_mem0 mem0.json --base-url http://127.0.0.1:3000 --tenant-id acme

Reads the open-source `Memory.get_all()` output (`{"results": [...]}`, or the plain list of older versions) and the
platform's `MemoryClient.get_all()` output (a list, or a page `{"count", "next", "results": [...]}`); several files
may be given. Each mem0 memory becomes one current memory of its `user_id` (`--user` puts them all in one user):
`content` its text, `created_at`/`updated_at` its times, type PREFERENCE when a mem0 category says preferences,
INTENT when it says goals or plans, else FACT, and what mem0 knew besides (id, hash, metadata, categories, agent,
run, app, actor) under `metadata.mem0`. The memory key is made from the mem0 id and time, so running the import
again stores nothing twice. Memories of the same text (case, spacing and punctuation aside) are kept once.

The memories are sent as export pages (docs/export-format.md), each all or nothing; `--out FILE` writes the export
document instead (for `make import`, or to look at first). Embeddings and the search index are computed by the
server, as for any save.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory_client._routes import EXPORT_FILE_FORMAT, export_file
from agent_memory_client.types import ExportedMemory, ExportedVersion, ExportPage, MemoryType

if TYPE_CHECKING:
    from agent_memory_client.client import MemoryClient

# What a page may hold so the server takes it (docs/export-format.md "Sizes"): every memory here costs two writes
# (the memory and its content marker) of the 90, and its text embedding work: at most ~7,000 characters a page.
MEMORIES_PER_PAGE = 40
CHARACTERS_PER_PAGE = 7_000
# The server's default importance by type.
IMPORTANCE: dict[MemoryType, int] = {"FACT": 70, "PREFERENCE": 60, "INTENT": 80}
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_KEPT = ("id", "hash", "metadata", "categories", "agent_id", "run_id", "app_id", "actor_id", "role")


class Mem0FormatError(ValueError):
    """The input is not a mem0 get_all output; the message says where."""


def mem0_memories(exported: Any, where: str = "input") -> list[dict[str, Any]]:
    """The memory objects of one get_all output, whichever of its shapes."""
    if isinstance(exported, Mapping) and isinstance(exported.get("results"), list):
        exported = exported["results"]
    if not isinstance(exported, list):
        raise Mem0FormatError(f"{where}: expected mem0 get_all output (a list of memories, or {{\"results\": [...]}})")
    found = []
    for i, item in enumerate(exported):
        if not isinstance(item, Mapping) or not isinstance(item.get("memory"), str) or not item.get("id"):
            raise Mem0FormatError(f"{where}: item {i} is no mem0 memory (it needs `id` and `memory`)")
        found.append(dict(item))
    return found


def memory_key(mem0_id: str, created_at: datetime) -> str:
    """A key of the server's form (time-ordered), the same for the same mem0 memory every time."""
    millis = max(0, int(created_at.timestamp() * 1000)) & ((1 << 48) - 1)
    value = (millis << 80) | int.from_bytes(hashlib.sha256(str(mem0_id).encode()).digest()[:10], "big")
    return "mem_" + "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def _time(value: Any, fallback: datetime) -> datetime:
    if not isinstance(value, str) or not value:
        return fallback
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return fallback
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _type_of(categories: Iterable[str]) -> MemoryType:
    names = " ".join(categories).casefold()
    if "preference" in names:
        return "PREFERENCE"
    if any(word in names for word in ("goal", "plan", "intent")):
        return "INTENT"
    return "FACT"


def _same_text(text: str) -> str:
    """Text as the server compares it for duplicates: width, case, spacing and punctuation aside."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not unicodedata.category(ch).startswith(("P", "Z", "C")))


def converted(item: Mapping[str, Any], now: datetime) -> ExportedVersion:
    """One mem0 memory as a current memory version of the export format."""
    created = min(_time(item.get("created_at"), now), now)
    updated = min(max(_time(item.get("updated_at"), created), created), now)
    categories = [str(c) for c in item.get("categories") or [] if isinstance(c, str)]
    kept = {name: item[name] for name in _KEPT if item.get(name) not in (None, "", [], {})}
    memory_type = _type_of(categories)
    return {
        "memory_key": memory_key(str(item["id"]), created), "memory_type": memory_type,
        "content": str(item["memory"]).strip(), "category": None, "field": None,
        "importance": IMPORTANCE[memory_type], "keywords": [], "source": "mem0", "conversation_id": None,
        "metadata": {"mem0": kept}, "context": None, "created_at": _iso(created), "updated_at": _iso(updated),
        "valid_from": _iso(created), "superseded_at": None, "superseded_by": None, "supersedes": None,
        "version": 1, "access_count": 0, "last_accessed_at": None, "deleted_at": None, "origin": "import",
        "written_by": None, "retraction": False,
    }


def pages_by_user(memories: Iterable[Mapping[str, Any]], *, user: str | None = None,
                  now: datetime | None = None) -> dict[str, list[ExportPage]]:
    """The export pages of each user: mem0 memories grouped by `user_id` (or all under `user`), oldest first,
    the same text once; a memory without a user and no `user` given is refused (Mem0FormatError)."""
    now = now or datetime.now(timezone.utc)
    by_user: dict[str, list[ExportedVersion]] = {}
    seen: dict[str, set[str]] = {}
    for item in memories:
        owner = user or item.get("user_id")
        if not owner:
            raise Mem0FormatError(f"mem0 memory {item.get('id')} has no user_id: name the user with --user")
        version = converted(item, now)
        text = _same_text(version["content"])
        if not text or text in seen.setdefault(str(owner), set()):
            continue
        seen[str(owner)].add(text)
        by_user.setdefault(str(owner), []).append(version)
    return {owner: _paged(sorted(versions, key=lambda v: (v["created_at"], v["memory_key"])))
            for owner, versions in by_user.items()}


def _paged(versions: Sequence[ExportedVersion]) -> list[ExportPage]:
    pages: list[ExportPage] = []
    current: list[ExportedMemory] = []
    characters = 0
    for version in versions:
        size = len(version["content"])
        if current and (len(current) == MEMORIES_PER_PAGE or characters + size > CHARACTERS_PER_PAGE):
            pages.append(_page(current))
            current, characters = [], 0
        current.append({"versions": [version]})
        characters += size
    if current:
        pages.append(_page(current))
    return pages


def _page(memories: list[ExportedMemory]) -> ExportPage:
    return {"format": "agent-memory-export", "version": 1, "source_tenant_id": None, "scope": None,
            "exported_at": None, "memories": memories, "log": [], "hot_memory": [], "reports": [], "files": [],
            "synonyms": [], "next_cursor": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_memory_client.import_mem0", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="JSON files of mem0 get_all output")
    parser.add_argument("--base-url", default=os.environ.get("AGENT_MEMORY_URL", "http://127.0.0.1:3000"))
    parser.add_argument("--tenant-id", default=os.environ.get("AGENT_MEMORY_TENANT"))
    parser.add_argument("--token", default=os.environ.get("AGENT_MEMORY_TOKEN"), help="a bearer token (deployments)")
    parser.add_argument("--user", default=None, help="import every memory into this user (default: mem0's user_id)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the export document here instead of sending it (one user only)")
    args = parser.parse_args(argv)
    try:
        found = [m for path in args.files
                 for m in mem0_memories(json.loads(path.read_text(encoding="utf-8")), str(path))]
        users = pages_by_user(found, user=args.user)
    except (OSError, json.JSONDecodeError, Mem0FormatError) as error:
        print(f"import_mem0: {error}", file=sys.stderr)
        return 2
    if args.out is not None:
        if len(users) != 1:
            print(f"import_mem0: --out writes one user's document; these files hold {len(users)} users "
                  "(name one with --user)", file=sys.stderr)
            return 2
        ((_, pages),) = users.items()
        args.out.write_text(json.dumps(export_file(pages), ensure_ascii=False), encoding="utf-8")
        print(f"wrote {sum(len(p['memories']) for p in pages)} memories to {args.out} ({EXPORT_FILE_FORMAT})",
              file=sys.stderr)
        return 0
    return _send(args, users)


def _send(args: argparse.Namespace, users: dict[str, list[ExportPage]]) -> int:
    from agent_memory_client import MemoryClient, MemoryClientError

    with MemoryClient(args.base_url, tenant_id=args.tenant_id, token=args.token) as client:
        try:
            for line in send(client, users):
                print(line, file=sys.stderr)
        except MemoryClientError as error:
            print(f"import_mem0: {error}", file=sys.stderr)
            return 1
    return 0


def send(client: MemoryClient, users: dict[str, list[ExportPage]]) -> Iterator[str]:
    """Import each user's pages in order; says per user what was imported and what was there already."""
    for user_id, pages in users.items():
        results = client.import_file("users", user_id, pages)
        written = sum(r["imported"]["memories"] for r in results)
        skipped = sum(r["skipped"]["memories"] for r in results)
        yield f"{user_id}: {written} memories imported, {skipped} there already"

if __name__ == "__main__":
    sys.exit(main())
