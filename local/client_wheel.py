"""The Python client as its users get it: the sdist built from clients/python, the wheel built from that sdist (as
pip builds one from an sdist), what each holds, and the wheel installed into throw-away venvs and tried there.

    python -m local.client_wheel [--out clients/python/dist]

Two venvs, installed at once: the package alone (it imports from the venv, its version is the distribution's, and
`python -m agent_memory_client.mcp_server` exits naming the `mcp` extra), and the package with `[mcp]` (the MCP
server, built with the installed SDK, lists the tools of the API's catalogue, answered in-process). The build
backend and the dependencies come from the package index through pip, pinned to the versions of the venv running
this (the versions the tests ran with); a dependency this venv lacks resolves as it would for a user.
Exits 1 naming each problem found.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import venv
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from local.template import ROOT

CLIENT = ROOT / "clients" / "python"
PACKAGE = "agent_memory_client"
USER = "u-wheel-check"

# Run in the venv with the package alone: it is the installed one, and its version is the distribution's.
PLAIN_PROBE = """
import importlib.metadata, sys
import agent_memory_client
from agent_memory_client._extras import DISTRIBUTION
assert agent_memory_client.__file__.startswith(sys.prefix), agent_memory_client.__file__
assert importlib.metadata.version(DISTRIBUTION) == agent_memory_client.__version__
print(DISTRIBUTION, agent_memory_client.__version__)
"""

# Run in the venv with [mcp]: the server over a client whose API answers the catalogue given as argv[1].
MCP_PROBE = """
import json, sys
import anyio, httpx
from agent_memory_client import AsyncMemoryClient
from agent_memory_client.mcp_server import MemoryToolServer

catalogue = json.loads(open(sys.argv[1], encoding="utf-8").read())

async def main():
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=catalogue))
    async with AsyncMemoryClient("http://api.test", http_client=httpx.AsyncClient(transport=transport)) as client:
        handlers = MemoryToolServer(client, sys.argv[2])
        await handlers.server()
        listed = await handlers.list_tools(None, None)
        print(json.dumps([tool.name for tool in listed.tools]))

anyio.run(main)
"""


def run(command: Sequence[str], *, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def checked(command: Sequence[str], *, cwd: Path | None = None, timeout: float = 300) -> str:
    done = run(command, cwd=cwd, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr or done.stdout}")
    return done.stdout


def project() -> dict[str, Any]:
    """The client's pyproject.toml."""
    with (CLIENT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def pinned_versions(exclude: set[str]) -> str:
    """A pip constraints file: every distribution of this venv at its version, but `exclude` (normalised names)."""
    pins = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and normalised(name) not in exclude:
            pins[normalised(name)] = f"{name}=={dist.version}"
    return "\n".join(sorted(pins.values())) + "\n"


def normalised(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def new_venv(path: Path) -> Path:
    """A venv without pip (pip runs from this venv with --python): its python."""
    venv.EnvBuilder(with_pip=False, clear=True).create(path)
    return path / "bin" / "python"


def pip_install(python: Path, constraints: Path, *requirements: str) -> None:
    checked([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check",
             "--constraint", str(constraints), *requirements])


def build(work: Path, out: Path, constraints: Path) -> tuple[Path, Path]:
    """The sdist from the source tree, then the wheel from the unpacked sdist, both into `out`."""
    python = new_venv(work / "build-env")
    build_system = project()["build-system"]
    pip_install(python, constraints, *build_system["requires"])
    backend = build_system["build-backend"]
    sdist = out / checked([str(python), "-c", f"import {backend} as b, sys; print(b.build_sdist(sys.argv[1]))",
                           str(out)], cwd=CLIENT).strip()
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "sdist", filter="data")
    [unpacked] = (work / "sdist").iterdir()
    wheel = out / checked([str(python), "-c", f"import {backend} as b, sys; print(b.build_wheel(sys.argv[1]))",
                           str(out)], cwd=unpacked).strip()
    return sdist, wheel


def package_files() -> set[str]:
    return {path.relative_to(CLIENT).as_posix() for path in (CLIENT / PACKAGE).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def wheel_problems(wheel: Path, distribution: str) -> list[str]:
    """What the wheel lacks: a module or py.typed of the package, the license, its metadata's name."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        name = next(line.split(":", 1)[1].strip() for line in archive.read(metadata).decode().splitlines()
                    if line.startswith("Name:"))
    problems = [f"the wheel lacks {path}" for path in sorted(package_files() - names)]
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("the wheel lacks its LICENSE")
    if name != distribution:
        problems.append(f"the wheel's distribution is {name!r}, not {distribution!r}")
    return problems


def sdist_problems(sdist: Path) -> list[str]:
    """What the sdist lacks of the package and of the files a build and a reader need."""
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    wanted = package_files() | {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"}
    return [f"the sdist lacks {path}" for path in sorted(wanted - names)]


def try_plain(work: Path, wheel: Path, constraints: Path) -> list[str]:
    python = new_venv(work / "plain")
    pip_install(python, constraints, str(wheel))
    probe = run([str(python), "-I", "-c", PLAIN_PROBE], cwd=work)
    if probe.returncode != 0:
        return [f"the installed package does not import as itself:\n{probe.stderr}"]
    distribution = probe.stdout.split()[0]
    server = run([str(python), "-I", "-m", f"{PACKAGE}.mcp_server", "--user", USER], cwd=work, timeout=60)
    wanted = f"the MCP server needs the mcp extra: pip install '{distribution}[mcp]'"
    if server.returncode != 1 or not server.stderr.startswith(wanted):
        return [f"without [mcp], the MCP server exited {server.returncode} saying {server.stderr.strip()!r}, "
                f"not {wanted!r}"]
    return []


def try_mcp(work: Path, wheel: Path, constraints: Path) -> list[str]:
    from agent_memory.api.tools import system_prompt, tool_definitions

    tools = tool_definitions(include="all")
    catalogue = work / "catalogue.json"
    catalogue.write_text(json.dumps({"tools": tools, "system_prompt": system_prompt()}), encoding="utf-8")
    python = new_venv(work / "with-mcp")
    pip_install(python, constraints, f"{wheel}[mcp]")
    probe = run([str(python), "-I", "-c", MCP_PROBE, str(catalogue), USER], cwd=work, timeout=60)
    if probe.returncode != 0:
        return [f"with [mcp], the MCP server did not list its tools:\n{probe.stderr}"]
    listed = json.loads(probe.stdout.strip().splitlines()[-1])
    if listed != [tool["name"] for tool in tools]:
        return [f"with [mcp], the MCP server listed {listed}"]
    return []


def check(out: Path) -> list[str]:
    distribution = str(project()["project"]["name"])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="client-wheel-") as temporary:
        work = Path(temporary)
        constraints = work / "constraints.txt"
        constraints.write_text(pinned_versions({normalised(distribution), "agent-memory-client"}), encoding="utf-8")
        sdist, wheel = build(work, out, constraints)
        problems = sdist_problems(sdist) + wheel_problems(wheel, distribution)
        with ThreadPoolExecutor(max_workers=2) as pool:
            tried = [pool.submit(try_plain, work, wheel, constraints), pool.submit(try_mcp, work, wheel, constraints)]
            for attempt in tried:
                problems += attempt.result()
        print(f"{sdist.name}, {wheel.name} in {out}: "
              f"{'installed and tried, alone and with [mcp]' if not problems else 'problems found'}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=CLIENT / "dist")
    args = parser.parse_args(argv)
    problems = check(args.out.resolve())
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
