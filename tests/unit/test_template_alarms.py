"""template.yaml tells someone when the deployment breaks: an alarm per dead-letter queue, per function's errors and
throttles, on the API's 5xx rate and latency and on the table's throttling, each notifying AlarmTopicArn when one is
given; and one dashboard that names only resources of the stack."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from local.template import functions, load_template, resources

NOTIFY = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}


def alarms() -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in resources().items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def watched(alarm: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(namespace, metric, dimensions) of every metric the alarm reads, whether single or by metric math."""
    props = alarm["Properties"]
    if "MetricName" in props:
        return [(props["Namespace"], props["MetricName"], props["Dimensions"])]
    return [(m["MetricStat"]["Metric"]["Namespace"], m["MetricStat"]["Metric"]["MetricName"],
             m["MetricStat"]["Metric"]["Dimensions"]) for m in props["Metrics"] if "MetricStat" in m]


def alarms_on(namespace: str, metric: str, dimension: dict[str, Any]) -> list[str]:
    return [lid for lid, alarm in alarms().items()
            if any((ns, name) == (namespace, metric) and dimension in dims for ns, name, dims in watched(alarm))]


def dead_letter_queues() -> set[str]:
    """Every queue something sends its failures to: a queue's redrive policy, an event source's on-failure
    destination, a schedule's dead-letter config."""
    found = set()
    for resource in resources().values():
        props = resource.get("Properties", {})
        if "RedrivePolicy" in props:
            found.add(props["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0])
        for event in props.get("Events", {}).values() if resource["Type"] == "AWS::Serverless::Function" else []:
            on_failure = event["Properties"].get("DestinationConfig", {}).get("OnFailure", {})
            dead_letters = event["Properties"].get("DeadLetterConfig", {})
            for target in (on_failure.get("Destination"), dead_letters.get("Arn")):
                if target:
                    found.add(target["Fn::GetAtt"][0])
    return found


def test_the_dead_letter_queues_are_found():
    assert dead_letter_queues() == {"IndexerDeadLetterQueue", "AccessStatsDeadLetterQueue",
                                    "LogExtractionDeadLetterQueue", "RollupDeadLetterQueue",
                                    "RollupWorkDeadLetterQueue"}


@pytest.mark.parametrize("queue", sorted(dead_letter_queues()))
def test_every_dead_letter_queue_has_an_alarm_that_fires_on_one_message(queue):
    [alarm_id] = alarms_on("AWS/SQS", "ApproximateNumberOfMessagesVisible",
                           {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}})
    alarm = alarms()[alarm_id]

    assert (alarm["Properties"]["Threshold"], alarm["Properties"]["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert alarm.get("Condition") == resources()[queue].get("Condition")  # it exists exactly when its queue does


@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_an_alarm_on_its_errors_and_on_its_throttles(metric):
    for function in functions():
        [alarm_id] = alarms_on("AWS/Lambda", metric, {"Name": "FunctionName", "Value": {"Ref": function}})

        assert alarms()[alarm_id].get("Condition") == resources()[function].get("Condition"), alarm_id


def test_the_api_has_alarms_on_its_5xx_rate_and_its_p95_and_p99_latency():
    api = {"Name": "ApiId", "Value": {"Ref": "MemoryApi"}}
    [rate] = alarms_on("AWS/ApiGateway", "5xx", api)
    latency = {alarms()[lid]["Properties"]["ExtendedStatistic"]: alarms()[lid]["Properties"]["Threshold"]
               for lid in alarms_on("AWS/ApiGateway", "Latency", api)}

    assert alarms_on("AWS/ApiGateway", "Count", api) == [rate]
    assert latency == {"p95": {"Ref": "ApiLatencyP95AlarmMs"}, "p99": {"Ref": "ApiLatencyP99AlarmMs"}}


def test_the_table_has_an_alarm_on_throttled_reads_and_writes():
    table = {"Name": "TableName", "Value": {"Ref": "MemoryTable"}}

    assert alarms_on("AWS/DynamoDB", "ReadThrottleEvents", table) == ["MemoryTableThrottlesAlarm"]
    assert alarms_on("AWS/DynamoDB", "WriteThrottleEvents", table) == ["MemoryTableThrottlesAlarm"]


def test_every_alarm_notifies_the_topic_when_it_fires_and_clears_and_nothing_without_one():
    template = load_template()
    assert template["Parameters"]["AlarmTopicArn"]["Default"] == ""
    assert template["Conditions"]["HasAlarmTopic"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]}

    wrong = [lid for lid, alarm in alarms().items()
             if alarm["Properties"].get("AlarmActions") != NOTIFY or alarm["Properties"].get("OKActions") != NOTIFY]

    assert alarms() and wrong == []


# ------------------------------------------------------------------------------------------------ the dashboard

PSEUDO = {"AWS::Region": "us-east-1", "AWS::StackName": "agent-memory-dev", "AWS::AccountId": "123456789012"}


def dashboard_body(*, opensearch: bool) -> tuple[dict[str, Any], set[str]]:
    """The dashboard's JSON as CloudFormation would write it with UseOpenSearch true or false, and the names its
    substitutions reference (`Resource`, `Resource.Attribute`, parameters, pseudo parameters)."""
    template = load_template()
    referenced: set[str] = set()

    def value(name: str) -> str:
        referenced.add(name)
        parameter = template["Parameters"].get(name)
        return str(parameter["Default"]) if parameter else PSEUDO.get(name, f"{name}-value")

    def render(node: Any) -> str:
        if isinstance(node, str):
            return node
        if "Fn::Join" in node:
            separator, parts = node["Fn::Join"]
            return separator.join(render(part) for part in parts)
        if "Fn::If" in node:
            condition, when_true, when_false = node["Fn::If"]
            assert condition == "UseOpenSearch", condition
            return render(when_true if opensearch else when_false)
        if "Fn::Sub" in node:
            return re.sub(r"\$\{([^}]+)\}", lambda match: value(match.group(1)), node["Fn::Sub"])
        raise AssertionError(f"unexpected intrinsic in the dashboard: {node}")

    body = render(resources()["OperationsDashboard"]["Properties"]["DashboardBody"])
    return json.loads(body), referenced


@pytest.mark.parametrize("opensearch", [False, True], ids=["serverless tier", "opensearch tier"])
def test_the_dashboard_is_json_naming_only_resources_and_parameters_the_stack_has(opensearch):
    template = load_template()
    _, referenced = dashboard_body(opensearch=opensearch)
    present = {lid for lid, r in resources().items() if r.get("Condition") != "UseOpenSearch" or opensearch}

    unknown = [name for name in referenced
               if name.split(".")[0] not in present | set(template["Parameters"]) and name not in PSEUDO]

    assert referenced and unknown == []


@pytest.mark.parametrize("opensearch", [False, True], ids=["serverless tier", "opensearch tier"])
def test_the_dashboard_shows_every_functions_errors_and_every_dead_letter_queue(opensearch):
    body, referenced = dashboard_body(opensearch=opensearch)
    shown = {f"{metric[1]} {name}" for widget in body["widgets"] if widget["type"] == "metric"
             for metric in widget["properties"]["metrics"] if isinstance(metric[0], str)
             for name in referenced if metric[3] == f"{name}-value"}
    present = {lid for lid, r in resources().items() if r.get("Condition") != "UseOpenSearch" or opensearch}

    assert {f"Errors {f}" for f in functions() if f in present} <= shown
    assert {f"ApproximateNumberOfMessagesVisible {q}.QueueName" for q in dead_letter_queues() if q in present} <= shown
    [alarm_widget] = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert {"ApiServerErrorRateAlarm.Arn", "MemoryTableThrottlesAlarm.Arn"} <= {
        a.removesuffix("-value") for a in alarm_widget["properties"]["alarms"]}
