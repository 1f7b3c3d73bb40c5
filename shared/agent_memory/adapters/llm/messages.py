"""The one path of a Claude Messages call that uses tools (extraction, the weekly report, the hot-memory
refresh), and its error ladder.

The system prompt is marked for prompt caching; temperature goes in the request body (the SDK's signature
dropped it; the API still takes it for Haiku-class models; None = omit it). Retries with backoff on
408/409/429/5xx/529 (rate limited, overloaded) are the SDK's own (`max_retries`); what still fails, a
provider status or a connection error or timeout, is logged and raised as `LlmUnavailable`.
"""

from __future__ import annotations

from typing import Any

import anthropic

from agent_memory.errors import LlmUnavailable
from agent_memory.observability import logger


def create_with_tools(client: Any, *, model: str, max_tokens: int, temperature: float | None, system: str,
                      tools: list[dict[str, Any]], tool_choice: dict[str, Any], content: str, unavailable: str,
                      task: str | None = None) -> Any:
    """The model's message for one user turn of `content`. `unavailable` is the `LlmUnavailable` message (what
    the caller should do); `task` names the call in the log."""
    about: dict[str, Any] = {"llm_model": model, **({"task": task} if task else {})}
    try:
        return client.messages.create(
            model=model,
            max_tokens=max_tokens,
            extra_body=None if temperature is None else {"temperature": temperature},
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            tools=tools,
            tool_choice=tool_choice,
            messages=[{"role": "user", "content": content}],
        )
    except anthropic.APIStatusError as error:
        logger.warning("llm call failed", extra={"status": error.status_code, **about})
        raise LlmUnavailable(unavailable, details={"provider_status": error.status_code}) from error
    except anthropic.APIError as error:  # connection errors and timeouts, after the SDK's retries
        logger.warning("llm call failed", extra={"error": type(error).__name__, **about})
        raise LlmUnavailable(unavailable) from error
