"""Unpacked sizes of what `sam build` built (.aws-sam/build): each layer with its largest packages, and each
function with the layers it lists, against Lambda's limit of 250 MB unzipped for a function and all its layers.

    python -m local.layer_size .aws-sam/build --max SharedLayer=150

Exits 1 when a function with its layers is past Lambda's limit or a layer is past its --max. Sizes are the bytes
of the files as Lambda unpacks them (not the disk blocks `du` counts), in MiB: Lambda's "250 MB" is 262,144,000
bytes. A function whose layers differ by a template condition is counted with all of them (the worst case).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local.template import load_template

MIB = 1024 * 1024
LAMBDA_UNZIPPED_MIB = 250


@dataclass(frozen=True)
class Artifact:
    name: str  # the logical id
    size: int  # bytes
    packages: dict[str, int] = field(default_factory=dict)  # distribution (or top-level name) -> bytes
    layers: tuple[str, ...] = ()  # for a function: the logical ids of its layers


def files_of(root: Path) -> list[Path]:
    """Regular files under root; a symbolic link is not followed (the zip holds the link, not its target)."""
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def package_sizes(site: Path) -> dict[str, int]:
    """Bytes per installed distribution under a site directory, largest first. A file belongs to the
    distribution whose RECORD lists it, else to the one that owns most of its top-level entry (a .pyc compiled
    after installation), else to its top-level entry (agent_memory, a function's own code)."""
    owner: dict[str, str] = {}
    by_top: dict[str, Counter[str]] = {}
    for record in site.glob("*.dist-info/RECORD"):
        dist = record.parent.name.split("-", 1)[0]
        with record.open(newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                if not row or row[0].startswith(("..", "/")):
                    continue  # scripts installed outside the site directory
                owner[row[0]] = dist
                by_top.setdefault(row[0].split("/", 1)[0], Counter())[dist] += 1
    sizes: Counter[str] = Counter()
    for path in files_of(site):
        relative = path.relative_to(site).as_posix()
        top = relative.split("/", 1)[0]
        dist = owner.get(relative) or (by_top[top].most_common(1)[0][0] if top in by_top else top)
        sizes[dist] += path.stat().st_size
    return dict(sizes.most_common())


def _layer_refs(value: Any) -> set[str]:
    """Logical ids referenced in a Layers entry, through Fn::If (both branches: the worst case)."""
    if isinstance(value, dict):
        if "Ref" in value:
            return set() if str(value["Ref"]).startswith("AWS::") else {str(value["Ref"])}
        return set().union(*(_layer_refs(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_layer_refs(v) for v in value))
    return set()  # an ARN string: a layer this build does not hold


def artifacts(build_dir: Path) -> tuple[list[Artifact], list[Artifact]]:
    """(layers, functions) of a `sam build` output directory, read from its template.yaml."""
    template = load_template(build_dir / "template.yaml")
    global_layers = template.get("Globals", {}).get("Function", {}).get("Layers", [])
    layers, functions = [], []
    for logical_id, resource in template["Resources"].items():
        root = build_dir / logical_id
        if resource["Type"] == "AWS::Serverless::LayerVersion" and root.is_dir():
            site = root / "python" if (root / "python").is_dir() else root
            layers.append(Artifact(logical_id, sum(p.stat().st_size for p in files_of(root)), package_sizes(site)))
        elif resource["Type"] == "AWS::Serverless::Function" and root.is_dir():
            refs = _layer_refs(global_layers) | _layer_refs(resource["Properties"].get("Layers", []))
            functions.append(Artifact(logical_id, sum(p.stat().st_size for p in files_of(root)),
                                      layers=tuple(sorted(refs))))
    return layers, functions


def check(layers: list[Artifact], functions: list[Artifact], limits_mib: dict[str, float]) -> list[str]:
    """What is too big, one line each (empty: all within the limits)."""
    sizes = {layer.name: layer.size for layer in layers}
    problems = [f"{name} is not in the build" for name in limits_mib if name not in sizes]
    for layer in layers:
        if layer.name in limits_mib and layer.size > limits_mib[layer.name] * MIB:
            problems.append(f"{layer.name} is {layer.size / MIB:.1f} MiB unpacked, past its limit of "
                            f"{limits_mib[layer.name]:g} MiB")
    for function in functions:
        total = function.size + sum(sizes.get(name, 0) for name in function.layers)
        if total > LAMBDA_UNZIPPED_MIB * MIB:
            problems.append(f"{function.name} with its layers is {total / MIB:.1f} MiB unpacked, past Lambda's "
                            f"{LAMBDA_UNZIPPED_MIB} MiB")
    return problems


def report(layers: list[Artifact], functions: list[Artifact], limits_mib: dict[str, float], top: int = 12) -> str:
    sizes = {layer.name: layer.size for layer in layers}
    lines = ["Layers (unpacked, largest packages first):"]
    for layer in sorted(layers, key=lambda a: -a.size):
        limit = f" (limit {limits_mib[layer.name]:g} MiB)" if layer.name in limits_mib else ""
        lines.append(f"  {layer.name:<28}{layer.size / MIB:8.1f} MiB{limit}")
        lines += [f"    {name:<26}{size / MIB:8.1f} MiB" for name, size in list(layer.packages.items())[:top]]
        if len(layer.packages) > top:
            rest = sum(list(layer.packages.values())[top:])
            lines.append(f"    {f'{len(layer.packages) - top} more':<26}{rest / MIB:8.1f} MiB")
    lines.append(f"Functions with their layers (Lambda's limit: {LAMBDA_UNZIPPED_MIB} MiB unpacked):")
    for function in sorted(functions, key=lambda a: a.name):
        total = function.size + sum(sizes.get(name, 0) for name in function.layers)
        parts = " + ".join([f"code {function.size / MIB:.2f}", *function.layers])
        lines.append(f"  {function.name:<28}{total / MIB:8.1f} MiB  ({parts})")
    return "\n".join(lines)


def _limit(text: str) -> tuple[str, float]:
    name, _, mib = text.partition("=")
    try:
        return name, float(mib)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LAYER=MIB, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", type=Path, nargs="?", default=Path(".aws-sam/build"))
    parser.add_argument("--max", type=_limit, action="append", default=[], metavar="LAYER=MIB",
                        help="fail when this layer is larger, unpacked (repeatable)")
    parser.add_argument("--top", type=int, default=12, help="packages listed per layer")
    args = parser.parse_args(argv)
    if not (args.build_dir / "template.yaml").is_file():
        print(f"{args.build_dir}/template.yaml not found: run sam build (make build) first", file=sys.stderr)
        return 2
    limits = dict(args.max)
    layers, functions = artifacts(args.build_dir)
    print(report(layers, functions, limits, args.top))
    problems = check(layers, functions, limits)
    sys.stdout.flush()
    for problem in problems:
        print(f"TOO BIG: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
