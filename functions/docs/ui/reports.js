// Weekly reports (the rollup's layer), newest first.

import { api } from "./api.js";
import { chip, clear, empty, h, loadInto, text, time } from "./dom.js";

export function renderReports(panel, { kind, id }) {
  const list = h("div", { class: "reports" });
  clear(panel,
    h("div", { class: "toolbar" },
      h("h2", {}, "Weekly reports"),
      h("button", { type: "button", onclick: () => load() }, "Refresh")),
    list);
  const load = () => loadInto(list, async () => {
    const { reports } = await api.reports(kind, id);
    if (!reports.length) {
      return empty("No weekly reports yet: the rollup writes one per week with activity (locally: make rollup).");
    }
    return reports.map(reportCard);
  });
  load();
}

function reportCard(report) {
  const metrics = Object.entries(report.metrics ?? {});
  return h("article", { class: "card report", "aria-label": `Week ${report.week_start} to ${report.week_end}` },
    h("header", { class: "report-head" },
      h("h3", {}, `${report.week_start} → ${report.week_end}`),
      chip(report.generated_by, "muted"),
      h("span", { class: "muted small" }, "written ", time(report.created_at))),
    text("p", report.summary, { class: "report-summary" }),
    report.key_events?.length
      ? h("section", {}, h("h4", {}, "Key events"), h("ul", {}, report.key_events.map((e) => text("li", e))))
      : null,
    metrics.length
      ? h("dl", { class: "metrics" }, metrics.map(([name, value]) => h("div", {},
        h("dt", { text: name.replaceAll("_", " ") }), h("dd", { text: metricValue(value) }))))
      : null);
}

/** A metric for people: numbers and text as they are, a breakdown ({user: 2, assistant: 1}) as "user 2 · assistant 1". */
function metricValue(value) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const parts = Object.entries(value).map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`);
    return parts.length ? parts.join(" · ") : "—";
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}
