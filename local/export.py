"""`make export` and `make import`: a user's or project's whole export as one JSON document, over HTTP.

    make export TENANT=acme USER=u-42 > u-42.json        # from the running `make run` (PORT, default 3000)
    make import TENANT=new USER=u-42 FILE=u-42.json      # into the running stack, page by page

`PROJECT=p-1` instead of `USER=` for a project. `API_URL=https://...` (with `API_TOKEN=`, a bearer token) points
either at a deployment instead; there the token says the tenant. The document is
`{"format": "agent-memory-export-file", "version": 1, "pages": [...]}`, each page in the export format
(docs/export-format.md); the import sends the pages in order, each all or nothing, and a second run stores
nothing twice. What it did goes to stderr; the export's JSON alone to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_memory_client import MemoryApiError, MemoryClient, MemoryConnectionError
from agent_memory_client.types import Scope


def _client(args: argparse.Namespace) -> MemoryClient:
    url = args.api_url or f"http://127.0.0.1:{args.port}"
    return MemoryClient(url, tenant_id=args.tenant, token=args.token or None)


def _scope(args: argparse.Namespace) -> tuple[Scope, str]:
    if bool(args.user) == bool(args.project):
        raise SystemExit("name one of USER= (a user) or PROJECT= (a project)")
    return ("users", args.user) if args.user else ("projects", args.project)


def export(args: argparse.Namespace) -> int:
    scope, scope_id = _scope(args)
    with _client(args) as client:
        pages = []
        for page in client.iter_export(scope, scope_id):
            pages.append(page)
            print(f"page {len(pages)}: {len(page['memories'])} memories, {len(page['log'])} log messages, "
                  f"{len(page['files'])} files", file=sys.stderr)
    document: dict[str, Any] = {"format": "agent-memory-export-file", "version": 1, "pages": pages}
    json.dump(document, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def import_(args: argparse.Namespace) -> int:
    scope, scope_id = _scope(args)
    document = json.loads(Path(args.file).read_text(encoding="utf-8"))
    with _client(args) as client:
        for number, result in enumerate(client.import_file(scope, scope_id, document), 1):
            print(f"page {number}: imported {result['imported']}, skipped {result['skipped']}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["export", "import"])
    parser.add_argument("--tenant", default=os.environ.get("TENANT") or None)
    parser.add_argument("--user", default=None)
    parser.add_argument("--project", default=None)
    parser.add_argument("--file", default=None, help="the export document to import")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--api-url", default=os.environ.get("API_URL") or None)
    parser.add_argument("--token", default=os.environ.get("API_TOKEN") or None)
    args = parser.parse_args(argv)
    if args.action == "import" and not args.file:
        raise SystemExit("make import needs FILE= (a document make export wrote)")
    try:
        return export(args) if args.action == "export" else import_(args)
    except MemoryConnectionError as error:
        print(f"no API answers at {args.api_url or f'http://127.0.0.1:{args.port}'} (is make run running?): {error}",
              file=sys.stderr)
    except MemoryApiError as error:
        print(f"the API refused: {error}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
