"""What each layer installs, checked against the installed packages' metadata (the dev venv holds both layers'):
the OpenSearch layer is installed with --no-deps, so its list must be opensearch-py's whole closure less what
the shared layer already holds, pinned to the versions the tests ran with."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def requirements(path: Path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [Requirement(line) for line in lines if line]


def closure(roots: list[Requirement]) -> set[str]:
    """Every distribution the roots need here (extras and environment markers evaluated), by canonical name."""
    names: set[str] = set()
    done: set[tuple[str, str]] = set()
    todo = list(roots)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        names.add(name)
        for extra in {"", *requirement.extras}:
            if (name, extra) in done:
                continue
            done.add((name, extra))
            for text in metadata.requires(name) or []:
                dependency = Requirement(text)
                if dependency.marker is None or dependency.marker.evaluate({"extra": extra}):
                    todo.append(dependency)
    return names


def test_given_the_opensearch_layer_when_compared_with_opensearch_py_then_it_holds_what_the_shared_layer_lacks():
    shared = requirements(ROOT / "shared" / "requirements.txt")
    opensearch = requirements(ROOT / "layers" / "opensearch" / "requirements.txt")
    client = next(r for r in opensearch if canonicalize_name(r.name) == "opensearch-py")

    assert {canonicalize_name(r.name) for r in opensearch} == closure([client]) - closure(shared)


def test_given_each_layer_pin_when_compared_with_the_dev_venv_then_it_is_the_version_the_tests_ran_with():
    pins = requirements(ROOT / "shared" / "requirements.txt") + requirements(
        ROOT / "layers" / "opensearch" / "requirements.txt")

    assert all(str(r.specifier).startswith("==") for r in pins)
    assert {r.name: str(r.specifier)[2:] for r in pins} == {r.name: metadata.version(r.name) for r in pins}


def test_given_the_shared_layer_then_it_leaves_opensearch_and_the_sdk_to_their_own_places():
    names = {canonicalize_name(r.name) for r in requirements(ROOT / "shared" / "requirements.txt")}

    assert not names & {"opensearch-py", "boto3", "botocore", "snowballstemmer"}
