"""Amazon Titan Text Embeddings V2 through bedrock-runtime (multilingual; 256/512/1024 dims; normalised).

InvokeModel takes one text per call (batch inference is an asynchronous job API), so a batch is
embedded with a few concurrent calls.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from agent_memory.errors import EmbeddingUnavailable

if TYPE_CHECKING:
    from types_boto3_bedrock_runtime.client import BedrockRuntimeClient

_CONCURRENCY = 8
_MAX_CHARS = 50_000  # Titan V2 accepts up to 8,192 tokens; stay well inside it


class TitanEmbedder:
    def __init__(self, *, client: BedrockRuntimeClient | None = None, model_id: str, dimension: int,
                 region: str) -> None:
        self.model_id = f"{model_id}:{dimension}"
        self.dimension = dimension
        self._model = model_id
        self._region = region
        self._client = client

    def _runtime(self) -> BedrockRuntimeClient:
        if self._client is None:
            import boto3

            self._client = boto3.client("bedrock-runtime", region_name=self._region)
        return self._client

    def _embed(self, text: str) -> np.ndarray:
        body = {"inputText": text[:_MAX_CHARS], "dimensions": self.dimension, "normalize": True}
        try:
            response = self._runtime().invoke_model(modelId=self._model, body=json.dumps(body),
                                                    contentType="application/json", accept="application/json")
        except Exception as error:  # botocore errors after its own retries
            raise EmbeddingUnavailable("the embedding model is unavailable, retry shortly") from error
        payload = json.loads(response["body"].read())
        return np.asarray(payload["embedding"], dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with ThreadPoolExecutor(max_workers=min(_CONCURRENCY, len(texts))) as pool:
            return np.vstack(list(pool.map(self._embed, texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(text)
