"""`make reindex`: rebuild the OpenSearch index from the table, behind its alias.

Against the running `make run SEARCH=opensearch` (its table and node, read from the data dir's stack.json), or,
when OPENSEARCH_ENDPOINT is set, against the deployment the environment names (MEMORY_TABLE_NAME and AWS
credentials too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from local.runtime import function_environment
from local.settings import LocalSettings
from local.stack import STATE_FILE
from local.template import ROOT, functions

ADMIN = [sys.executable, "-m", "agent_memory.adapters.opensearch.admin", "reindex"]


def local_stack_environment(settings: LocalSettings) -> dict[str, str]:
    """The environment of the running local stack's functions, for the admin command."""
    state_path = settings.data_dir / STATE_FILE
    if not state_path.exists():
        raise SystemExit("make reindex: no local stack is running (make run SEARCH=opensearch), and "
                         "OPENSEARCH_ENDPOINT is not set")
    state = json.loads(state_path.read_text(encoding="utf-8"))
    if not state.get("opensearch"):
        raise SystemExit("make reindex: the running local stack searches with the serverless tier: there is no "
                         "index to rebuild (make run SEARCH=opensearch)")
    indexer = functions()["IndexerFunction"]  # the function that writes the index: its settings
    env = {**os.environ, **function_environment(indexer, {"OpenSearchEndpoint": state["opensearch"]},
                                                state.get("tables"))}
    env.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_ENDPOINT_URL_DYNAMODB": state["dynamodb"],
                "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])})
    return env


def main() -> int:
    settings = LocalSettings()
    env = dict(os.environ) if settings.opensearch_endpoint else local_stack_environment(settings)
    return subprocess.run([*ADMIN, *sys.argv[1:]], cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
