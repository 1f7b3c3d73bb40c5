// Hot memory (the always-injected layer): view by section, and edit (PUT) or remove (DELETE) one entry.

import { api } from "./api.js";
import { clear, empty, errorBox, h, loadInto, showValue, text, time } from "./dom.js";

const SECTIONS = [
  ["meta", "meta", "Meta"], ["status", "status", "Status"], ["decisions", "decision", "Decisions"],
  ["preferences", "preference", "Preferences"],
];

export function renderHotMemory(panel, { kind, id }) {
  const view = h("div", { class: "hot-sections" });
  const status = h("div", { "aria-live": "polite" });
  const form = h("form", { class: "card form-grid hot-editor", id: "hot-editor", "aria-labelledby": "hot-editor-title" },
    h("h2", { id: "hot-editor-title", class: "span-all" }, "Set an entry"),
    h("div", { class: "field" },
      h("label", { for: "hot-type" }, "Type"),
      h("select", { id: "hot-type", name: "type" }, SECTIONS.map(([, type]) => h("option", { value: type }, type)))),
    h("div", { class: "field" },
      h("label", { for: "hot-key" }, "Key"),
      h("input", { id: "hot-key", name: "key", required: true, maxlength: "128", autocomplete: "off",
        placeholder: "e.g. 申请进度" })),
    h("div", { class: "field" },
      h("label", { for: "hot-priority" }, "Priority"),
      h("input", { id: "hot-priority", name: "priority", type: "number", min: "-1000", max: "1000", value: "0" })),
    h("div", { class: "span-all field" },
      h("label", { for: "hot-value" }, "Value"),
      h("textarea", { id: "hot-value", name: "value", rows: "3", required: true, "aria-describedby": "hot-value-hint" }),
      h("p", { id: "hot-value-hint", class: "hint" },
        "JSON (an object, list, number, true/false, \"quoted text\"), or plain text, which is saved as a string.")),
    h("div", { class: "span-all actions" },
      h("button", { type: "submit", class: "primary" }, "Save entry"),
      h("button", { type: "reset" }, "Clear")),
    h("div", { class: "span-all" }, status));

  const refresh = () => loadInto(view, async () => sections(await api.hotMemory(kind, id)));

  function sections(hot) {
    if (!hot.entries.length) return empty(`No hot memory for this ${kind === "users" ? "user" : "project"} yet.`);
    return SECTIONS.map(([group, type, title]) => {
      const entries = hot[group] ?? [];
      return h("section", { class: "card hot-section", "aria-labelledby": `hot-${type}` },
        h("h2", { id: `hot-${type}` }, title, h("span", { class: "count" }, String(entries.length))),
        entries.length
          ? h("div", { class: "table-wrap" }, h("table", { class: "hot" },
            h("thead", {}, h("tr", {}, ["Key", "Value", "Priority", "Updated", ""].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, entries.map(entryRow))))
          : empty("none"));
    });
  }

  function entryRow(entry) {
    return h("tr", { dataset: { type: entry.type, key: entry.key } },
      h("th", { scope: "row", "data-label": "Key" }, text("span", entry.key)),
      h("td", { "data-label": "Value", class: "content-cell" }, text("span", showValue(entry.value), {
        class: typeof entry.value === "string" ? null : "json" })),
      h("td", { "data-label": "Priority" }, String(entry.priority)),
      h("td", { "data-label": "Updated" }, time(entry.updated_at, { stacked: true }),
        entry.source === "llm" ? h("span", { class: "small" }, " (llm)") : ""),
      h("td", { class: "row-actions" },
        h("button", { type: "button", class: "small", "aria-label": `Edit ${entry.type} ${entry.key}`,
          onclick: () => edit(entry) }, "Edit"),
        h("button", { type: "button", class: "small danger", "aria-label": `Delete ${entry.type} ${entry.key}`,
          onclick: () => remove(entry) }, "Delete")));
  }

  function edit(entry) {
    form.elements.type.value = entry.type;
    form.elements.key.value = entry.key;
    form.elements.priority.value = String(entry.priority);
    form.elements.value.value = typeof entry.value === "string" ? entry.value : JSON.stringify(entry.value, null, 2);
    clear(status);
    form.scrollIntoView({ block: "nearest" });
    form.elements.value.focus();
  }

  async function remove(entry) {
    if (!window.confirm(`Delete the ${entry.type} entry "${entry.key}"?`)) return;
    try {
      await api.deleteHotMemory(kind, id, entry.type, entry.key);
      clear(status, h("p", { class: "ok" }, `Deleted ${entry.type} `, text("q", entry.key), "."));
      await refresh();
    } catch (error) {
      clear(status, errorBox(error));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { type, key, priority, value } = form.elements;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const saved = await api.putHotMemory(kind, id, type.value, key.value.trim(), {
        value: parseValue(value.value), priority: Number(priority.value || 0),
      });
      clear(status, h("p", { class: "ok" }, `Saved ${saved.type} `, text("q", saved.key), "."));
      await refresh();
    } catch (error) {
      clear(status, errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  form.addEventListener("reset", () => clear(status));

  clear(panel, h("div", { class: "split split-wide" }, view, form));
  refresh();
}

/** JSON when the text is JSON, else the text itself. */
function parseValue(raw) {
  const trimmed = raw.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
}
