"""template.yaml keeps the properties the architecture relies on."""

from __future__ import annotations

from local.template import functions, load_template, resources, routes

READ_ACTIONS = {"dynamodb:GetItem", "dynamodb:Query"}


def actions_of(logical_id: str) -> set[str]:
    found: set[str] = set()
    for policy in resources()[logical_id]["Properties"].get("Policies", []):
        for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
            actions = statement["Action"]
            found.update([actions] if isinstance(actions, str) else actions)
    return found


def test_table_has_pitr_encryption_ttl_and_a_stream():
    table = resources()["MemoryTable"]["Properties"]
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["SSESpecification"] == {"SSEEnabled": True}
    assert table["TimeToLiveSpecification"]["Enabled"] is True
    assert table["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_functions_run_python312_on_one_shared_layer():
    template = load_template()
    assert template["Globals"]["Function"]["Runtime"] == "python3.12"
    assert template["Globals"]["Function"]["Layers"] == [{"Ref": "SharedLayer"}]
    assert resources()["SharedLayer"]["Metadata"]["BuildMethod"] == "python3.12"
    assert set(functions()) >= {"SaveFunction", "LoadFunction", "SummarizeFunction", "InjectFunction",
                                 "RollupFunction", "IndexerFunction", "AccessStatsFunction"}


def test_only_the_save_function_writes_memories():
    assert actions_of("SaveFunction") >= {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
    assert actions_of("RollupFunction") == READ_ACTIONS
    # Inject may add its context-cache items, and only those (partition keys starting with CTX#).
    assert actions_of("InjectFunction") == READ_ACTIONS | {"dynamodb:PutItem", "bedrock:InvokeModel"}
    put = next(s for s in resources()["InjectFunction"]["Properties"]["Policies"][0]["Statement"]
               if s["Action"] == "dynamodb:PutItem")
    assert put["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["CTX#*"]}}
    # Summarize may also call the LLM for its narrative, never write the table.
    assert actions_of("SummarizeFunction") == READ_ACTIONS | {"bedrock:InvokeModel"}
    # The read path may only enqueue access statistics; their worker may only update items.
    assert actions_of("LoadFunction") == READ_ACTIONS | {"sqs:SendMessage"}
    assert actions_of("AccessStatsFunction") == {"dynamodb:UpdateItem"}
    assert not {a for a in actions_of("IndexerFunction") if a.startswith("dynamodb:") and "Stream" not in a
                and a not in READ_ACTIONS}


def test_the_llm_using_function_snapshots_its_imports():
    save = resources()["SaveFunction"]["Properties"]
    assert save["SnapStart"] == {"ApplyOn": "PublishedVersions"} and save["AutoPublishAlias"]


def test_rollup_is_scheduled_weekly_on_monday_0100_in_a_parameter_timezone():
    event = resources()["RollupFunction"]["Properties"]["Events"]["WeeklyRollup"]
    assert event["Type"] == "ScheduleV2"
    assert event["Properties"]["ScheduleExpression"] == "cron(0 1 ? * MON *)"
    assert event["Properties"]["ScheduleExpressionTimezone"] == {"Ref": "ScheduleTimezone"}


def test_every_api_route_is_behind_the_jwt_authorizer():
    auth = resources()["MemoryApi"]["Properties"]["Auth"]
    assert auth["DefaultAuthorizer"] == "JwtAuthorizer"
    assert load_template()["Globals"]["Function"]["Environment"]["Variables"]["TENANT_SOURCE"] == "jwt"
    assert {r.route_key for r in routes()} >= {
        "POST /v1/users/{user_id}/memories", "POST /v1/users/{user_id}/memories/batch",
        "POST /v1/users/{user_id}/memories/extract", "POST /v1/users/{user_id}/context/load",
        "GET /v1/users/{user_id}/memories", "GET /v1/users/{user_id}/memories/{memory_key}",
        "DELETE /v1/users/{user_id}/memories/{memory_key}",
    }
