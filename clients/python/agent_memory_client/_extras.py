"""The client's distribution name, and the error that names the extra to install when an optional part of the
client (the MCP server, the Anthropic memory tool) is imported without it."""

from __future__ import annotations

# The name to `pip install` (the import package is agent_memory_client).
DISTRIBUTION = "agent-memory-serverless-client"


def missing_extra(feature: str, extra: str, error: ModuleNotFoundError) -> ModuleNotFoundError:
    """`feature` could not import a module its extra installs: say which extra, and the command that installs it."""
    return ModuleNotFoundError(f"{feature} needs the {extra} extra: pip install '{DISTRIBUTION}[{extra}]' "
                               f"(no module named {error.name!r})", name=error.name)
