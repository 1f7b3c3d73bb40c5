// A user's current memories (paged, newest first) and, for the chosen one, the history of its field.

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
        listError,
        h("div", { class: "table-wrap" },
          h("table", { class: "memories" },
            h("thead", {}, h("tr", {},
              ["Type", "Memory", "Importance", "Created", ""].map((c) => h("th", { scope: "col" }, c)))),
            rows)),
        h("div", { class: "more" }, more)),
      history));
  load(true);
}

async function showHistory(section, userId, memoryKey) {
  const body = h("div");
  clear(section, h("h2", { id: "history-title" }, "History"), body);
  await loadInto(body, async () => {
    const detail = await api.getMemory(userId, memoryKey);
    const versions = [...detail.history].sort((a, b) => String(a.valid_from).localeCompare(String(b.valid_from)));
    if (!versions.length) versions.push(detail.memory);
    return [
      h("p", { class: "muted small" },
        detail.memory.field ? ["Field ", h("code", { text: detail.memory.field }), ` · ${versions.length} version(s)`]
          : "This memory has no field: it is its only version."),
      h("ol", { class: "timeline" }, versions.reverse().map(timelineItem)),
    ];
  });
}

function timelineItem(version) {
  const current = !version.superseded_at;
  return h("li", { class: ["timeline-item", current ? "current" : "superseded"] },
    h("div", { class: "timeline-head" },
      time(version.valid_from ?? version.created_at),
      current ? chip("current", "current") : chip("superseded", "superseded")),
    text("p", version.content, { class: "timeline-content" }),
    h("p", { class: "muted small" }, `importance ${version.importance}`,
      version.superseded_at ? [" · superseded ", time(version.superseded_at)] : null,
      " · ", h("code", { text: version.memory_key })));
}
