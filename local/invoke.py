"""`make invoke FN=SaveFunction EVENT=events/save-create-memory.json`: one function, one event, as
`sam local invoke -e` would run it, against an in-process moto with the template's tables.

The function's result is the only thing on stdout (so `| jq` works); its logs and metrics (EMF lines)
go to stderr, as CloudWatch keeps them apart from the response.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from local.runtime import LocalFunctions, apply_local_environment, create_local_resources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("function", help="logical id in template.yaml, e.g. SaveFunction")
    parser.add_argument("event", type=Path, help="event JSON file")
    args = parser.parse_args()
    event = json.loads(args.event.read_text(encoding="utf-8"))
    import boto3
    from moto import mock_aws

    with mock_aws(), contextlib.redirect_stdout(sys.stderr):
        queues = create_local_resources(boto3.client("dynamodb", region_name="us-east-1"),
                                        boto3.client("sqs", region_name="us-east-1"))
        apply_local_environment(queues=queues)
        result = LocalFunctions().invoke(args.function, event)
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
