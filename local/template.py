"""Read template.yaml the way SAM would, for the local stack and the tests.

Tables and routes come from the template itself, so local runs and tests cannot drift
from the infrastructure that gets deployed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = ROOT / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader that keeps CloudFormation short-form tags (!Ref, !GetAtt, ...) as dicts."""


def _construct_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = str(value).split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:
        raise yaml.constructor.ConstructorError(None, None, f"!{suffix} on an unexpected node", node.start_mark)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _construct_tag)


@lru_cache(maxsize=4)
def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    # A template is a mapping at the top: yaml.load says only "a document".
    return cast(dict[str, Any], yaml.load(path.read_text(encoding="utf-8"), Loader=_CfnLoader))


@dataclass(frozen=True)
class Route:
    method: str  # upper case, or ANY
    path: str  # template form: /v1/users/{user_id}/memories
    function: str  # logical id

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if self.method not in ("ANY", method.upper()):
            return None
        pattern = "^" + re.sub(
            r"\\\{(\w+)(\\\+)?\\\}",
            # A greedy variable takes an empty tail too, as API Gateway's does: /ui/{proxy+} answers /ui/.
            lambda m: f"(?P<{m.group(1)}>.*)" if m.group(2) else f"(?P<{m.group(1)}>[^/]+)",
            re.escape(self.path),
        ) + "$"
        found = re.match(pattern, path)
        return found.groupdict() if found else None


@dataclass(frozen=True)
class FunctionDef:
    logical_id: str
    code_uri: str
    handler: str
    environment: dict[str, Any] = field(default_factory=dict)
    timeout: int = 3  # seconds, as Lambda's default
    snap_start: bool = False  # SnapStart on its published versions: initialised, then snapshotted, before use

    @property
    def module(self) -> str:
        """The handler's module: `save_handler` of `save_handler.handler`."""
        return self.handler.rsplit(".", 1)[0]

    @property
    def handler_file(self) -> Path:
        return ROOT / self.code_uri / f"{self.module}.py"


def resources(template: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = (template or load_template())["Resources"]  # a template's Resources is a mapping
    return found


def functions(template: dict[str, Any] | None = None) -> dict[str, FunctionDef]:
    template = template or load_template()
    global_env = template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    global_timeout = template.get("Globals", {}).get("Function", {}).get("Timeout", 3)
    found = {}
    for logical_id, resource in resources(template).items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        env = {**global_env, **props.get("Environment", {}).get("Variables", {})}
        found[logical_id] = FunctionDef(logical_id, props["CodeUri"], props["Handler"], env,
                                        int(props.get("Timeout", global_timeout)),
                                        snap_start=(props.get("SnapStart") or {}).get("ApplyOn") == "PublishedVersions")
    return found


def function_events(event_type: str, template: dict[str, Any] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(function logical id, event properties) for every event of `event_type` (HttpApi, SQS, ...)."""
    return [(logical_id, event["Properties"])
            for logical_id, resource in resources(template).items()
            if resource["Type"] == "AWS::Serverless::Function"
            for event in resource["Properties"].get("Events", {}).values() if event["Type"] == event_type]


def routes(template: dict[str, Any] | None = None) -> list[Route]:
    """HTTP API routes, most specific first (literal segments beat parameters, greedy last)."""
    found = [Route(props["Method"].upper(), props["Path"], logical_id)
             for logical_id, props in function_events("HttpApi", template)]

    def specificity(route: Route) -> tuple[int, int, int]:
        segments = route.path.strip("/").split("/")
        greedy = any(s.endswith("+}") for s in segments)
        literals = sum(1 for s in segments if not s.startswith("{"))
        return (1 if greedy else 0, -len(segments), -literals)

    return sorted(found, key=specificity)


def dynamodb_tables(template: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """create_table arguments for every AWS::DynamoDB::Table, by logical id (TableName left to the caller)."""
    tables = {}
    for logical_id, resource in resources(template).items():
        if resource["Type"] != "AWS::DynamoDB::Table":
            continue
        props = resource["Properties"]
        spec: dict[str, Any] = {
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
        }
        for optional in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if optional in props:
                spec[optional] = props[optional]
        if "StreamSpecification" in props:  # CloudFormation implies StreamEnabled; the API wants it said
            spec["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
        tables[logical_id] = spec
    return tables


def create_tables(client: Any, names: dict[str, str], template: dict[str, Any] | None = None) -> None:
    """Create the template's tables under the given physical names (logical id -> name); idempotent."""
    existing = set(client.list_tables().get("TableNames", []))
    for logical_id, spec in dynamodb_tables(template).items():
        name = names[logical_id]
        if name not in existing:
            client.create_table(TableName=name, **spec)
            client.get_waiter("table_exists").wait(TableName=name)


def parameter_values(overrides: dict[str, str] | None = None, template: dict[str, Any] | None = None) -> dict[str, str]:
    template = template or load_template()
    values = {name: str(p.get("Default", "")) for name, p in template.get("Parameters", {}).items()}
    values.update(overrides or {})
    return values


def resolve_environment(
    function: FunctionDef,
    *,
    physical_ids: dict[str, str],
    parameters: dict[str, str] | None = None,
) -> dict[str, str]:
    """The function's environment with !Ref resolved, as `sam local` does with --parameter-overrides."""
    params = parameter_values(parameters)
    env = {}
    for name, value in function.environment.items():
        if isinstance(value, dict) and "Ref" in value:
            ref = value["Ref"]
            if ref in physical_ids:
                value = physical_ids[ref]
            elif ref in params:
                value = params[ref]
            else:
                raise KeyError(f"{function.logical_id}: cannot resolve !Ref {ref} for {name}")
        elif isinstance(value, dict):
            raise KeyError(f"{function.logical_id}: unsupported intrinsic in {name}: {value}")
        env[name] = str(value)
    return env


def sqs_queues(template: dict[str, Any] | None = None) -> list[str]:
    """Logical ids of the template's SQS queues."""
    return [lid for lid, r in resources(template).items() if r["Type"] == "AWS::SQS::Queue"]


@dataclass(frozen=True)
class SqsEventSource:
    queue: str  # the queue's logical id
    function: str  # the function's logical id
    batch_size: int = 10
    batching_window_seconds: float = 0.0


def sqs_event_sources(template: dict[str, Any] | None = None) -> list[SqsEventSource]:
    """Every `Type: SQS` event of the template's functions."""
    return [SqsEventSource(props["Queue"]["Fn::GetAtt"][0], logical_id, int(props.get("BatchSize", 10)),
                           float(props.get("MaximumBatchingWindowInSeconds", 0)))
            for logical_id, props in function_events("SQS", template)]


@dataclass(frozen=True)
class StreamEventSource:
    table: str  # the table's logical id
    function: str
    batch_size: int = 100
    starting_position: str = "TRIM_HORIZON"
    maximum_retry_attempts: int = -1  # -1: until the record is older than maximum_record_age_seconds
    on_failure_queue: str | None = None  # the destination queue's logical id
    maximum_record_age_seconds: int = -1  # -1: until the stream drops it (24 hours)


def stream_event_sources(template: dict[str, Any] | None = None) -> list[StreamEventSource]:
    """Every `Type: DynamoDB` (table stream) event of the template's functions."""
    found = []
    for logical_id, props in function_events("DynamoDB", template):
        destination = (props.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination") or {})
        found.append(StreamEventSource(
            props["Stream"]["Fn::GetAtt"][0], logical_id, int(props.get("BatchSize", 100)),
            str(props.get("StartingPosition", "TRIM_HORIZON")), int(props.get("MaximumRetryAttempts", -1)),
            destination["Fn::GetAtt"][0] if "Fn::GetAtt" in destination else None,
            int(props.get("MaximumRecordAgeInSeconds", -1))))
    return found


def create_queues(client: Any, prefix: str, template: dict[str, Any] | None = None) -> dict[str, str]:
    """Create the template's queues with their visibility timeouts and redrive policies (idempotent);
    returns logical id -> queue URL."""
    template = template or load_template()
    urls = {lid: client.create_queue(QueueName=f"{prefix}-{lid}")["QueueUrl"] for lid in sqs_queues(template)}
    for lid, url in urls.items():
        props = resources(template)[lid].get("Properties", {})
        attributes = {name: str(props[name]) for name in ("VisibilityTimeout", "MessageRetentionPeriod")
                      if name in props}
        if "RedrivePolicy" in props:
            policy = props["RedrivePolicy"]
            dead_letter = policy["deadLetterTargetArn"]["Fn::GetAtt"][0]
            arn = client.get_queue_attributes(QueueUrl=urls[dead_letter], AttributeNames=["QueueArn"])
            attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": arn["Attributes"]["QueueArn"],
                                                      "maxReceiveCount": int(policy["maxReceiveCount"])})
        if attributes:
            client.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    return urls
