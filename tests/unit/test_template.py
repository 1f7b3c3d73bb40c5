"""template.yaml keeps the properties the architecture relies on."""

from __future__ import annotations

import json
import re

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
    # layers/Makefile builds it (pruned, precompiled); `make build` fails past 150 MiB unpacked
    assert resources()["SharedLayer"]["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "layers/",
                                                      "BuildArchitecture": "x86_64"}
    assert set(functions()) >= {"SaveFunction", "LoadFunction", "SummarizeFunction", "InjectFunction",
                                 "RollupFunction", "RollupWorkerFunction", "IndexerFunction",
                                 "AccessStatsFunction"}


def test_functions_that_build_the_services_get_the_opensearch_layer_only_with_the_opensearch_tier():
    # With OpenSearchEndpoint set, building the services (or the indexer) opens the index client (opensearch-py);
    # the docs never do, nor does the weekly schedule, which builds only its queue (get_rollup_scheduler), nor do
    # the access-statistics and rollup workers, which build their own graphs (tests/unit/test_worker_graphs.py).
    builders = {logical_id for logical_id, function in functions().items()
                if re.search(r"\bget_(services|indexer)\b", function.handler_file.read_text(encoding="utf-8"))}
    assert builders == set(functions()) - {"DocsFunction", "RollupFunction", "AccessStatsFunction",
                                            "RollupWorkerFunction"}
    assert resources()["OpenSearchLayer"]["Condition"] == "UseOpenSearch"
    on_condition = {"Fn::If": ["UseOpenSearch", {"Ref": "OpenSearchLayer"}, {"Ref": "AWS::NoValue"}]}
    for logical_id in builders:
        layers = resources()[logical_id]["Properties"]["Layers"]
        conditional = resources()[logical_id].get("Condition") == "UseOpenSearch"
        assert layers == ([{"Ref": "OpenSearchLayer"}] if conditional else [on_condition]), logical_id
    for logical_id in set(functions()) - builders:
        assert "Layers" not in resources()[logical_id]["Properties"], logical_id


def _writes_under(logical_id: str, prefix: str) -> set[str]:
    """The write actions a function may take only on items whose partition key starts with `prefix`."""
    statements = resources()[logical_id]["Properties"]["Policies"][0]["Statement"]
    return {action for s in statements if s.get("Condition") == {
                "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{prefix}*"]}}
            for action in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}


def test_only_the_save_function_writes_memories():
    assert actions_of("SaveFunction") >= {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
    # The schedule only fans out: it enqueues shard tasks and never touches the table.
    assert actions_of("RollupFunction") == {"sqs:SendMessage"}
    # The search functions may save their indexes' snapshots (SNAP#), inject its context cache (CTX#):
    # conditioned on those partition keys, nothing else.
    snapshots = {"dynamodb:PutItem", "dynamodb:BatchWriteItem"}
    for searcher in ("LoadFunction", "InjectFunction", "SummarizeFunction"):
        assert _writes_under(searcher, "SNAP#") == snapshots, searcher
    assert _writes_under("InjectFunction", "CTX#") == {"dynamodb:PutItem"}
    assert actions_of("InjectFunction") == READ_ACTIONS | snapshots | {"bedrock:InvokeModel"}
    # Summarize may also call the LLM for its narrative.
    assert actions_of("SummarizeFunction") == READ_ACTIONS | snapshots | {"bedrock:InvokeModel"}
    # The read path may also enqueue access statistics; their worker may only update items (and read the erased
    # users' tombstones, to drop statistics queued before an erasure). The export reads memories by key in batches
    # (BatchGetItem), as saves and imports do.
    assert actions_of("LoadFunction") == READ_ACTIONS | {"dynamodb:BatchGetItem"} | snapshots | {"sqs:SendMessage"}
    assert "dynamodb:BatchGetItem" in actions_of("SaveFunction")
    assert actions_of("AccessStatsFunction") == {"dynamodb:UpdateItem", "dynamodb:GetItem"}
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
    assert event["Properties"]["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": ["RollupDeadLetterQueue", "Arn"]}}
    # The scheduled time decides the week, so a late retry still rolls up the right one.
    assert json.loads(event["Properties"]["Input"])["time"] == "<aws.scheduler.scheduled-time>"
    for function in ("RollupFunction", "RollupWorkerFunction"):
        env = resources()[function]["Properties"]["Environment"]["Variables"]
        assert env == {"ROLLUP_QUEUE_URL": {"Ref": "RollupQueue"}, "ROLLUP_TIMEZONE": {"Ref": "ScheduleTimezone"}}


def test_rollup_worker_reports_partial_failures_and_its_queue_dead_letters_after_three_receives():
    worker = resources()["RollupWorkerFunction"]["Properties"]
    event = worker["Events"]["RollupTasks"]
    assert event["Type"] == "SQS" and event["Properties"]["Queue"] == {"Fn::GetAtt": ["RollupQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["Properties"]["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "RollupConcurrency"}}
    queue = resources()["RollupQueue"]["Properties"]
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": ["RollupWorkDeadLetterQueue", "Arn"]},
                                      "maxReceiveCount": 3}
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]
    # It writes reports, hot memory and log deletes in scope partitions only, and enqueues only its own tasks.
    assert actions_of("RollupWorkerFunction") == READ_ACTIONS | {
        "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem", "sqs:SendMessage", "bedrock:InvokeModel"}
    writes = next(s for s in worker["Policies"][0]["Statement"] if "dynamodb:PutItem" in s["Action"])
    assert writes["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["T#*"]}}
    sends = next(s for s in worker["Policies"][0]["Statement"] if s["Action"] == "sqs:SendMessage")
    assert sends["Resource"] == {"Fn::GetAtt": ["RollupQueue", "Arn"]}


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


def test_no_two_routes_of_one_method_can_match_the_same_path():
    """Scope routes (`/v1/{scope_type}/...`) never shadow literal ones (`/v1/users/{user_id}/memories`):
    same length, and at some position two different literals, so the matcher's order cannot matter."""
    from local.runtime import match_route

    plain = [r for r in routes() if not r.path.endswith("+}")]
    for index, a in enumerate(plain):
        for b in plain[index + 1:]:
            sa, sb = a.path.strip("/").split("/"), b.path.strip("/").split("/")
            if a.method != b.method or len(sa) != len(sb):
                continue
            assert any(x != y and "{" not in x + y for x, y in zip(sa, sb, strict=True)), (a.route_key, b.route_key)
    found = match_route("POST", "/v1/users/u1/conversations/c1/messages")
    assert found and found[0].function == "SaveFunction" and found[1]["conversation_id"] == "c1"
    found = match_route("POST", "/v1/projects/p1/conversations/search")
    assert found and found[0].function == "LoadFunction"
    found = match_route("POST", "/v1/users/u1/memories/search")
    assert found and found[0].path == "/v1/users/{user_id}/memories/search"


def test_a_greedy_route_takes_an_empty_tail_as_api_gateway_does():
    from local.runtime import match_route

    found = match_route("GET", "/ui/")
    assert found and found[0].path == "/ui/{proxy+}" and found[1] == {"proxy": ""}
    found = match_route("GET", "/ui")
    assert found and found[0].path == "/ui"


def test_logged_user_messages_reach_the_extraction_worker_through_a_queue_with_a_dlq():
    save = resources()["SaveFunction"]["Properties"]
    assert save["Environment"]["Variables"]["LOG_EXTRACTION_QUEUE_URL"] == {"Ref": "LogExtractionQueue"}
    assert "sqs:SendMessage" in actions_of("SaveFunction")
    queue = resources()["LogExtractionQueue"]["Properties"]
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": ["LogExtractionDeadLetterQueue", "Arn"]},
                                      "maxReceiveCount": 3}
    worker = resources()["ExtractWorkerFunction"]["Properties"]
    event = worker["Events"]["LoggedUserMessages"]["Properties"]
    assert event["Queue"] == {"Fn::GetAtt": ["LogExtractionQueue", "Arn"]}
    assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]
    assert actions_of("ExtractWorkerFunction") >= {"dynamodb:PutItem", "dynamodb:DeleteItem", "bedrock:InvokeModel"}


def test_bedrock_is_allowed_only_on_the_configured_model_family_and_this_regions_profiles():
    text = json.dumps(resources())
    assert "inference-profile/*\"" not in text and "foundation-model/anthropic.*" not in text
    assert "foundation-model/${BedrockModelPattern}" in text
    assert "${AWS::Region}:${AWS::AccountId}:inference-profile/*.${BedrockModelPattern}" in text


def test_the_indexer_writes_only_to_the_configured_domain_or_collection_when_one_is_named():
    policies = json.dumps(resources()["IndexerFunction"]["Properties"]["Policies"])
    assert "domain/${OpenSearchResourceName}/*" in policies
    assert "collection/${OpenSearchResourceName}" in policies


def test_every_function_that_opens_the_index_client_may_query_the_opensearch_tier_and_only_with_it():
    # A search, a count or an erasure's delete-by-query on an IAM-authorised domain or collection is refused
    # unless the function's role allows it; the indexer has its own, wider policy.
    query = {"Fn::If": ["UseOpenSearch", {"Ref": "OpenSearchQueryPolicy"}, {"Ref": "AWS::NoValue"}]}
    policy = resources()["OpenSearchQueryPolicy"]
    assert policy["Condition"] == "UseOpenSearch"
    document = json.dumps(policy["Properties"]["PolicyDocument"])
    assert "domain/${OpenSearchResourceName}/*" in document and "collection/${OpenSearchResourceName}" in document
    assert "ESHttpPut" not in document and "ESHttpDelete" not in document
    on_the_tier = {logical_id for logical_id, function in functions().items()
                   if function.handler_file.read_text(encoding="utf-8").count("get_services")}
    assert on_the_tier == set(functions()) - {"DocsFunction", "RollupFunction", "IndexerFunction",
                                               "AccessStatsFunction", "RollupWorkerFunction"}
    for logical_id in set(functions()) - {"IndexerFunction"}:
        policies = resources()[logical_id]["Properties"].get("Policies", [])
        assert (query in policies) == (logical_id in on_the_tier), logical_id


def test_api_access_logging_and_reserved_concurrency_are_parameters():
    template = load_template()
    assert {"ApiAccessLogs", "ReservedConcurrency"} <= set(template["Parameters"])
    api = resources()["MemoryApi"]["Properties"]
    assert "AccessLogSettings" in api
    assert "ReservedConcurrentExecutions" in template["Globals"]["Function"]


def test_the_indexer_receives_memory_items_only():
    stream = resources()["IndexerFunction"]["Properties"]["Events"]["MemoryStream"]["Properties"]
    [only] = stream["FilterCriteria"]["Filters"]

    assert json.loads(only["Pattern"]) == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MEM#"}]}}}}
