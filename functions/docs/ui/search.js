// The search playground: POST /v1/users/{id}/memories/search, each result's score breakdown drawn as bars.

import { api } from "./api.js";
import { bar, chip, clear, empty, errorBox, formatScore, h, text, time, typeChip } from "./dom.js";

// The breakdown's parts, in the order ranking combines them; `final` is drawn last, apart.
const PARTS = [
  ["keyword", "keyword"], ["text", "text"], ["lexical", "lexical"], ["vector", "vector"],
  ["time_decay", "time decay"], ["relevance", "relevance"], ["interaction", "interaction"],
  ["type_priority", "type priority"],
];
const TYPES = ["FACT", "PREFERENCE", "INTENT"];

export function renderSearch(panel, { id: userId }) {
  const results = h("div", { class: "results", "aria-live": "polite" });
  const form = h("form", { class: "card form-grid", id: "search-form", "aria-labelledby": "search-title" },
    h("h2", { id: "search-title", class: "span-all" }, "Search playground"),
    h("div", { class: "span-all field" },
      h("label", { for: "search-query" }, "Query"),
      h("input", { id: "search-query", name: "query", required: true, maxlength: "2000", autocomplete: "off",
        placeholder: "e.g. 网球 or where does the user live" })),
    h("div", { class: "field" },
      h("label", { for: "search-mode" }, "Mode"),
      h("select", { id: "search-mode", name: "search_mode" },
        h("option", { value: "" }, "default"), ["hybrid", "semantic", "keyword"].map((m) => h("option", { value: m }, m)))),
    h("div", { class: "field" },
      h("label", { for: "search-limit" }, "Limit"),
      h("input", { id: "search-limit", name: "limit", type: "number", min: "1", max: "20", value: "10" })),
    h("div", { class: "field" },
      h("label", { for: "search-min" }, "Minimum score"),
      h("input", { id: "search-min", name: "min_relevance_score", type: "number", min: "0", max: "1", step: "0.05",
        value: "0.3" })),
    h("div", { class: "field" },
      h("label", { for: "search-as-of" }, "As of"),
      h("input", { id: "search-as-of", name: "as_of", type: "datetime-local", step: "1",
        title: "Search the memories as they were at this moment (your browser's time zone); empty: now" })),
    h("fieldset", { class: "field types" },
      h("legend", {}, "Types"),
      h("div", { class: "checks" }, TYPES.map((t) => h("label", { class: "check" },
        h("input", { type: "checkbox", name: "memory_types", value: t }), ` ${t}`)))),
    h("div", { class: "span-all actions" }, h("button", { type: "submit", class: "primary" }, "Search")));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = {
      query: String(data.get("query")),
      limit: Number(data.get("limit") || 10),
      min_relevance_score: Number(data.get("min_relevance_score") || 0),
    };
    if (data.get("search_mode")) body.search_mode = data.get("search_mode");
    if (data.get("as_of")) body.as_of = new Date(String(data.get("as_of"))).toISOString();
    const types = data.getAll("memory_types");
    if (types.length) body.memory_types = types;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    results.setAttribute("aria-busy", "true");
    clear(results, h("p", { class: "muted loading" }, "Searching…"));
    try {
      clear(results, showResults(await api.search(userId, body)));
    } catch (error) {
      clear(results, errorBox(error));
    } finally {
      button.disabled = false;
      results.removeAttribute("aria-busy");
    }
  });
  clear(panel, form, results);
}

function showResults(output) {
  const summary = h("p", { class: "result-summary" },
    h("strong", {}, `${output.total_found} found`), ` · strategy `, h("code", { text: output.search_strategy_used }),
    ` · ${output.rounds_executed} round(s)`,
    output.as_of ? [" · as of ", time(output.as_of)] : null,
    output.time_cue ? [" · period: ", chip(output.time_cue.text, "keyword")] : null,
    output.expanded_keywords?.length
      ? [" · expanded: ", output.expanded_keywords.map((k) => chip(k, "keyword"))] : null);
  if (!output.results.length) return [summary, empty("No memory reached the minimum score.")];
  return [summary, h("ol", { class: "result-list" }, output.results.map(resultCard))];
}

function resultCard(result, index) {
  const breakdown = result.score_breakdown ?? {};
  return h("li", { class: "card result" },
    h("div", { class: "result-head" },
      h("span", { class: "rank", "aria-label": `rank ${index + 1}` }, `#${index + 1}`),
      typeChip(result.memory_type),
      chip(`round: ${result.recall_round}`, "muted"),
      time(result.created_at),
      h("span", { class: "score", title: "relevance score" }, formatScore(result.relevance_score))),
    text("p", result.content_preview || result.summary, { class: "result-content" }),
    breakdown.matched_keywords?.length
      ? h("p", { class: "keywords" }, "matched: ", breakdown.matched_keywords.map((k) => chip(k, "keyword"))) : null,
    // Results come in diversified order: one much like a result above gives way to one that adds something.
    breakdown.redundancy > 0
      ? h("p", { class: "muted small", title: "highest cosine similarity to a result ranked above this one" },
        `similarity to a result above: ${formatScore(breakdown.redundancy)}`) : null,
    h("div", { class: "breakdown", role: "group", "aria-label": `Score breakdown of result ${index + 1}` },
      PARTS.map(([name, label]) => bar({ label, value: Number(breakdown[name] ?? 0), max: 1 })),
      bar({ label: "final", value: Number(breakdown.final ?? result.relevance_score), max: 1, tone: "final" })),
    h("p", { class: "muted small" }, h("code", { text: result.memory_key })));
}
