// Inject preview: POST /v1/context/inject for this user, each block with its priority and its tokens against
// the budget, what was dropped or failed, and the text the model would get.

import { api } from "./api.js";
import { bar, chip, clear, errorBox, formatNumber, h, priorityChip, text } from "./dom.js";

export function renderInject(panel, { id: userId }) {
  const out = h("div", { class: "inject-result", "aria-live": "polite" });
  const form = h("form", { class: "card form-grid", id: "inject-form", "aria-labelledby": "inject-title" },
    h("h2", { id: "inject-title", class: "span-all" }, "Inject preview"),
    h("div", { class: "span-all field" },
      h("label", { for: "inject-message" }, "Current user message"),
      h("textarea", { id: "inject-message", name: "current_user_message", rows: "2",
        placeholder: "e.g. 今晚吃什么好？ / What should I prepare for tomorrow?" })),
    h("div", { class: "field" },
      h("label", { for: "inject-conversation" }, "Conversation id"),
      h("input", { id: "inject-conversation", name: "conversation_id", required: true, value: "inspector-preview",
        maxlength: "128", autocomplete: "off" })),
    h("div", { class: "field" },
      h("label", { for: "inject-budget" }, "Max context tokens"),
      h("input", { id: "inject-budget", name: "max_context_tokens", type: "number", min: "1000", max: "2000000",
        step: "1000", value: "16000", "aria-describedby": "inject-budget-hint" })),
    h("div", { class: "field" },
      h("label", { for: "inject-project" }, "Project id (optional)"),
      h("input", { id: "inject-project", name: "project_id", autocomplete: "off" })),
    h("div", { class: "field" },
      h("label", { for: "inject-placement" }, "Placement"),
      h("select", { id: "inject-placement", name: "placement" },
        h("option", { value: "pair" }, "pair"), h("option", { value: "system" }, "system"))),
    h("p", { id: "inject-budget-hint", class: "hint span-all" },
      "The API keeps room for the reply and the system prompt; the bars measure each block against what is left "
      + "(available)."),
    h("div", { class: "span-all actions" }, h("button", { type: "submit", class: "primary" }, "Preview")));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = {
      user_id: userId,
      conversation_id: String(data.get("conversation_id")).trim(),
      current_user_message: String(data.get("current_user_message") ?? ""),
      max_context_tokens: Number(data.get("max_context_tokens") || 16000),
      placement: data.get("placement"),
    };
    const project = String(data.get("project_id") ?? "").trim();
    if (project) body.project_id = project;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    out.setAttribute("aria-busy", "true");
    clear(out, h("p", { class: "muted loading" }, "Assembling…"));
    try {
      clear(out, showInjection(await api.inject(body)));
    } catch (error) {
      clear(out, errorBox(error));
    } finally {
      button.disabled = false;
      out.removeAttribute("aria-busy");
    }
  });
  clear(panel, form, out);
}

function showInjection(result) {
  const usage = result.token_usage;
  const available = usage.available;
  const blockTokens = result.blocks.reduce((sum, b) => sum + b.tokens, 0);
  const frame = Math.max(usage.context - blockTokens, 0);
  const free = Math.max(available - usage.messages_after - usage.context, 0);
  return [
    h("section", { class: "card", "aria-labelledby": "budget-title" },
      h("h2", { id: "budget-title" }, "Budget"),
      h("p", { class: "result-summary" },
        h("strong", {}, `${formatNumber(result.total_context_tokens)} context tokens`),
        ` of ${formatNumber(available)} available · history ${formatNumber(usage.messages_after)}`,
        usage.messages_after !== usage.messages_before ? ` (was ${formatNumber(usage.messages_before)})` : "",
        ` · counted by ${usage.counted_by}`,
        result.compacted ? [" · ", chip("compacted", "p1")] : null),
      stacked([
        ["history", usage.messages_after, "history"],
        ...result.blocks.map((b) => [b.type, b.tokens, String(b.priority).toLowerCase()]),
        ["frame", frame, "frame"],
        ["free", free, "free"],
      ], available),
      result.compaction_steps?.length
        ? h("p", { class: "small" }, "Compaction: ", result.compaction_steps.join(" → ")) : null),
    h("section", { class: "card", "aria-labelledby": "blocks-title" },
      h("h2", { id: "blocks-title" }, "Blocks"),
      result.blocks.length
        ? h("table", { class: "blocks" },
          h("thead", {}, h("tr", {}, ["Block", "Priority", "Tokens against the budget", "Cache"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, result.blocks.map((block) => h("tr", { dataset: { block: block.type } },
            h("th", { scope: "row", "data-label": "Block" }, h("code", { text: block.type })),
            h("td", { "data-label": "Priority" }, priorityChip(block.priority)),
            h("td", { "data-label": "Tokens" }, bar({
              label: block.type, value: block.tokens, max: available, tone: String(block.priority).toLowerCase(),
              display: `${formatNumber(block.tokens)} · ${percent(block.tokens, available)}`,
            })),
            h("td", { "data-label": "Cache" }, block.cached ? chip("cached", "current") : chip("fresh", "muted"),
              block.cache_ttl_seconds ? ` ${block.cache_ttl_seconds}s TTL` : " real time")))))
        : h("p", { class: "empty" }, "No block was injected."),
      result.dropped_contexts.length
        ? h("p", { class: "dropped" }, "Dropped for the budget: ", result.dropped_contexts.map((t) => chip(t, "p2")))
        : null,
      result.failed_contexts?.length
        ? h("ul", { class: "failed" }, result.failed_contexts.map((f) => h("li", {},
          priorityChip(f.priority), " ", h("code", { text: f.type }), " failed: ", text("span", f.reason))))
        : null),
    h("details", { class: "card rendered" },
      h("summary", {}, "What the model gets"),
      result.system?.length
        ? h("section", {}, h("h3", {}, "system"),
          result.system.map((block) => text("pre", block.text ?? JSON.stringify(block, null, 2))))
        : null,
      result.messages.map((message) => h("section", {},
        h("h3", {}, message.role),
        text("pre", typeof message.content === "string" ? message.content : JSON.stringify(message.content, null, 2))))),
  ];
}

function percent(part, whole) {
  if (!whole) return "—";
  const value = (100 * part) / whole;
  return `${value < 1 ? value.toFixed(1) : Math.round(value)}%`;
}

/** One bar for the whole budget, a segment per part, with a legend that carries the numbers. */
function stacked(parts, total) {
  const shown = parts.filter(([, tokens]) => tokens > 0);
  const track = h("div", { class: "stacked", role: "img",
    "aria-label": shown.map(([label, tokens]) => `${label} ${tokens}`).join(", ") + ` of ${total} tokens` });
  for (const [label, tokens, tone] of shown) {
    const segment = h("span", { class: `segment seg-${tone}`, title: `${label}: ${formatNumber(tokens)} tokens` });
    segment.style.setProperty("flex-grow", String(tokens));
    track.append(segment);
  }
  return [track, h("ul", { class: "legend" }, shown.map(([label, tokens, tone]) => h("li", {},
    h("span", { class: `swatch seg-${tone}`, "aria-hidden": "true" }), h("code", { text: label }),
    ` ${formatNumber(tokens)} (${percent(tokens, total)})`)))];
}
