// A user's current memories (paged, newest first) and, for the chosen one, the history of its field; the
// tenant's retention policy, and each memory's expiry under it.

import { api } from "./api.js";
import { bar, chip, clear, empty, errorBox, h, loadInto, text, time, typeChip } from "./dom.js";

const PAGE_SIZE = 20;
const TYPES = ["FACT", "PREFERENCE", "INTENT"];

export function renderMemories(panel, { id: userId }) {
  const filter = h("select", { id: "memory-type", name: "memory_type" },
    h("option", { value: "" }, "All types"), TYPES.map((t) => h("option", { value: t }, t)));
  const count = h("span", { class: "muted", "aria-live": "polite" });
  const rows = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "Load more");
  const listError = h("div");
  const retention = h("p", { id: "retention", class: "muted small", "aria-live": "polite" });
  const history = h("section", { class: "history card", "aria-labelledby": "history-title", "aria-live": "polite" },
    h("h2", { id: "history-title" }, "History"),
    empty("Choose a memory's History to see every version of its field."));
  let cursor = null;
  let shown = 0;

  async function load(reset) {
    if (reset) {
      cursor = null;
      shown = 0;
      clear(rows);
    }
    clear(listError);
    more.disabled = true;
    rows.closest("table")?.setAttribute("aria-busy", "true");
    try {
      const page = await api.listMemories(userId, { memoryType: filter.value, cursor, limit: PAGE_SIZE });
      for (const memory of page.items) rows.append(memoryRow(memory));
      shown += page.items.length;
      cursor = page.next_cursor;
      more.hidden = !cursor;
      count.textContent = `${shown} shown${cursor ? ", more available" : ""}`;
      if (!shown) rows.append(h("tr", {}, h("td", { colspan: "5" }, empty("No current memories for this user."))));
    } catch (error) {
      listError.append(errorBox(error));
    } finally {
      more.disabled = false;
      rows.closest("table")?.removeAttribute("aria-busy");
    }
  }

  function memoryRow(memory) {
    const button = h("button", {
      type: "button", class: "small", "aria-label": `History of ${memory.field ?? memory.memory_key}`,
      onclick: () => {
        for (const row of rows.querySelectorAll("tr.selected")) row.classList.remove("selected");
        button.closest("tr").classList.add("selected");
        showHistory(history, userId, memory.memory_key);
      },
    }, "History");
    return h("tr", { dataset: { key: memory.memory_key } },
      h("td", { "data-label": "Type" }, typeChip(memory.memory_type)),
      h("td", { "data-label": "Memory", class: "content-cell" }, text("span", memory.content),
        h("div", { class: "keywords" },
          memory.field ? h("code", { class: "field-name", title: "field", text: memory.field }) : null,
          memory.expires_at ? h("span", { class: "chip chip-expires", title: `expires ${memory.expires_at}` },
            "expires ", time(memory.expires_at)) : null,
          (memory.keywords ?? []).slice(0, 4).map((k) => chip(k.term ?? k, "keyword")))),
      h("td", { "data-label": "Importance" }, bar({ label: "importance", value: memory.importance, max: 100,
        display: String(memory.importance), tone: "importance" })),
      h("td", { "data-label": "Created" }, time(memory.created_at, { stacked: true })),
      h("td", { "data-label": "" }, button));
  }

  filter.addEventListener("change", () => load(true));
  more.addEventListener("click", () => load(false));
  clear(panel,
    h("div", { class: "split" },
      h("section", { class: "card", "aria-labelledby": "memories-title" },
        h("div", { class: "toolbar" },
          h("h2", { id: "memories-title" }, "Current memories"),
          h("label", { for: "memory-type" }, "Type"), filter,
          h("button", { type: "button", onclick: () => load(true) }, "Refresh"), count),
        retention,
        listError,
        h("div", { class: "table-wrap" },
          h("table", { class: "memories" },
            h("thead", {}, h("tr", {},
              ["Type", "Memory", "Importance", "Created", ""].map((c) => h("th", { scope: "col" }, c)))),
            rows)),
        h("div", { class: "more" }, more)),
      history));
  load(true);
  showRetention(retention);
}

/** "Retention: FACT kept · PREFERENCE kept · INTENT 180 days · log 30 days" (GET /v1/retention). */
async function showRetention(line) {
  try {
    const policy = await api.retention();
    const parts = Object.entries(policy.days).map(([key, days]) =>
      `${key === "LOG" ? "log" : key} ${days == null ? "kept until deleted" : `${days} days`}`);
    line.textContent = `Retention${policy.tenant_specific ? " (this tenant's)" : ""}: ${parts.join(" · ")}`;
  } catch (error) {
    line.textContent = `Retention: unknown (${error.message})`;
  }
}

async function showHistory(section, userId, memoryKey) {
  const body = h("div");
  clear(section, h("h2", { id: "history-title" }, "History"), body);
  await loadInto(body, async () => {
    const detail = await api.getMemory(userId, memoryKey);
    const versions = [...detail.history].sort((a, b) => String(a.valid_from).localeCompare(String(b.valid_from)));
    if (!versions.length) versions.push(detail.memory);
    const timeline = h("ol", { class: "timeline" }, [...versions].reverse().map(timelineItem));
    return [
      h("p", { class: "muted small" },
        detail.memory.field ? ["Field ", h("code", { text: detail.memory.field }), ` · ${versions.length} version(s)`]
          : "This memory has no field: it is its only version."),
      asOfField(versions, timeline),
      timeline,
    ];
  });
}

/** A version is what was known from its valid_from until it was superseded or deleted. */
function validAt(version, at) {
  const from = new Date(version.valid_from ?? version.created_at);
  return from <= at && (!version.superseded_at || at < new Date(version.superseded_at));
}

// The date field of the history: which version was known at that moment (the API's as_of reads the same rule).
function asOfField(versions, timeline) {
  const input = h("input", { id: "history-as-of", name: "as_of", type: "datetime-local", step: "1" });
  const note = h("p", { class: "muted small as-of-note", "aria-live": "polite" });
  function mark() {
    const at = input.value ? new Date(input.value) : null;
    const known = at ? versions.find((v) => validAt(v, at)) : null;
    for (const item of timeline.children) {
      const version = versions.find((v) => v.memory_key === item.dataset.key);
      item.classList.toggle("as-of", Boolean(known) && version === known);
      item.classList.toggle("not-as-of", Boolean(at) && version !== known);
    }
    note.textContent = !at ? "" : known
      ? `On ${at.toLocaleString()} this was known: version ${known.version ?? 1}.`
      : `On ${at.toLocaleString()} none of these versions was known.`;
  }
  input.addEventListener("input", mark);
  return h("div", { class: "as-of-field" },
    h("label", { for: "history-as-of" }, "As of"), input,
    h("button", { type: "button", class: "small", onclick: () => { input.value = ""; mark(); } }, "Now"),
    note);
}

// How a version came, as the API names it (`origin`), in words.
const ORIGINS = {
  extract: "extracted from a conversation", direct_save: "saved directly", import: "imported",
  memory_tool: "written by the memory tool", tool_executor: "saved by a tool call", unknown: "origin unknown",
};

function timelineItem(version) {
  const current = !version.superseded_at;
  const state = current ? chip("current", "current")
    : version.deleted_at ? chip("deleted", "deleted") : chip("superseded", "superseded");
  return h("li", { class: ["timeline-item", current ? "current" : "superseded"], dataset: { key: version.memory_key } },
    h("div", { class: "timeline-head" }, time(version.valid_from ?? version.created_at), state),
    text("p", version.content, { class: "timeline-content" }),
    h("p", { class: "muted small provenance" }, ORIGINS[version.origin ?? "unknown"] ?? version.origin,
      version.written_by ? [" by ", h("code", { text: version.written_by })] : null),
    h("p", { class: "muted small" }, `importance ${version.importance}`,
      version.deleted_at ? [" · deleted ", time(version.deleted_at)]
        : version.superseded_at ? [" · superseded ", time(version.superseded_at)] : null,
      " · ", h("code", { text: version.memory_key })));
}
