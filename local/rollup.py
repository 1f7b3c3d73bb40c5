"""`make rollup`: fire the weekly rollup at the running local stack (`make run`, same PORT) the way the
schedule would: events/rollup-schedule.json with the current time, posted to the local server's
internal POST /_local/invoke/RollupFunction (local only; the deployed API has no such route).
`WEEK=2026-11-16` (a Monday) rolls up that week instead of the previous one. The stack's SQS poller
then delivers the shard and scope tasks to RollupWorkerFunction, as Lambda's event source would.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from datetime import UTC, date, datetime
from typing import Any

from local.template import ROOT

SCHEDULE_EVENT = ROOT / "events" / "rollup-schedule.json"


def schedule_event(*, now: datetime | None = None, week: str | None = None) -> dict[str, Any]:
    """The schedule's event at `now` (what EventBridge Scheduler sends), with an optional week override."""
    event: dict[str, Any] = json.loads(SCHEDULE_EVENT.read_text(encoding="utf-8"))
    event["time"] = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if week:
        event["week"] = week
    return event


def _monday(text: str) -> str:
    """WEEK as the rollup takes it, checked before anything is sent (argparse reports the error)."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"WEEK must be a date as YYYY-MM-DD (a Monday), not {text!r}") from None
    if day.weekday() != 0:
        raise argparse.ArgumentTypeError(f"WEEK must be a Monday; {text} is a {day.strftime('%A')}")
    return day.isoformat()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--week", type=_monday, default=os.environ.get("WEEK") or None,
                        help="a Monday, e.g. 2026-11-16 (WEEK=)")
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/_local/invoke/RollupFunction"
    request = urllib.request.Request(url, data=json.dumps(schedule_event(week=args.week)).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            plan = json.loads(response.read())
    except urllib.error.HTTPError as error:
        sys.stderr.write(f"the rollup failed ({error.code}): {error.read().decode(errors='replace')}\n")
        return 1
    except urllib.error.URLError:
        sys.stderr.write(f"no local stack on port {args.port}: start it with `make run` (same PORT)\n")
        return 1
    print(json.dumps(plan, ensure_ascii=False))
    print(f"queued: the worker writes the reports for {plan['week_start']}..{plan['week_end']} in the background; "
          f"see GET /v1/{{users|projects}}/{{id}}/reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
