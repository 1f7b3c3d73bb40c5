// Small DOM helpers: elements without innerHTML (API text is never parsed as markup), bars, errors, dates.

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/;

/** "zh" for text with CJK characters (so the browser picks a CJK font and screen readers the right voice). */
export function langOf(text) {
  return CJK.test(String(text ?? "")) ? "zh" : null;
}

/**
 * h("button", {class: "primary", type: "button", onclick}, "Save"): props are attributes, except `class`,
 * `text` (textContent, with its language marked), `dataset`, and on* handlers; children are nodes or strings.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    else if (name === "text") {
      el.textContent = String(value);
      const lang = langOf(value);
      if (lang && !props.lang) el.lang = lang;
    } else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name in el && typeof value !== "string") el[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Text in the language it is written in (Chinese memories beside English ones). */
export function text(tag, value, props = {}) {
  return h(tag, { ...props, text: value ?? "" });
}

export const chip = (label, tone = "") => h("span", { class: ["chip", tone && `chip-${tone}`], text: label });

export function typeChip(memoryType) {
  return chip(memoryType, String(memoryType).toLowerCase());
}

export function priorityChip(priority) {
  return h("span", { class: ["chip", `chip-${String(priority).toLowerCase()}`], title: "priority" }, priority);
}

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
export const formatNumber = (n) => NUMBER.format(n);

export function formatScore(value) {
  return Number.isFinite(value) ? value.toFixed(2) : "—";
}

const DATE = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });

/** A <time> with the local date and time (`stacked`: on two lines), and the exact instant as its tooltip. */
export function time(iso, { stacked = false } = {}) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("time", { datetime: iso }, iso);
  return h("time", { datetime: iso, title: iso, class: stacked ? "stacked-time" : null },
    h("span", {}, DATE.format(date)), stacked ? " " : ", ", h("span", { class: "clock" }, CLOCK.format(date)));
}

/**
 * A horizontal bar for `value` out of `max` (role=meter, so assistive technology reads the numbers):
 * `label` names it, `display` is the number shown beside it.
 */
export function bar({ label, value, max = 1, display, tone = "", title }) {
  const fraction = max > 0 ? Math.min(Math.max(value / max, 0), 1) : 0;
  const fill = h("span", { class: "bar-fill" });
  fill.style.setProperty("width", `${(fraction * 100).toFixed(2)}%`);
  const shown = display ?? formatScore(value);
  return h("div", { class: ["bar", tone && `bar-${tone}`], title: title ?? `${label}: ${shown}` },
    h("span", { class: "bar-label", text: label }),
    h("span", {
      class: "bar-track", role: "meter", "aria-label": label, "aria-valuemin": "0", "aria-valuemax": String(max),
      "aria-valuenow": String(value), "aria-valuetext": shown,
    }, fill),
    h("span", { class: "bar-value" }, shown));
}

/** The API's error ({error: {code, message, details}}) for people: status, code, message, then each detail. */
export function errorBox(error) {
  const status = error?.status ? `${error.status} ` : "";
  const code = error?.code ?? "error";
  const details = error?.details;
  let list = null;
  if (Array.isArray(details) && details.length) {
    list = h("ul", { class: "error-details" }, details.map((d) => (d && typeof d === "object"
      ? h("li", {}, d.field ? h("code", {}, d.field) : null, d.field && d.message ? ": " : "",
        d.message ? text("span", d.message) : (d.field ? "" : JSON.stringify(d)))
      : h("li", { text: String(d) }))));
  } else if (details && typeof details === "object") {
    list = h("pre", { class: "error-details", text: JSON.stringify(details, null, 2) });
  }
  return h("div", { class: "error", role: "alert" },
    h("p", { class: "error-title" }, h("strong", {}, `${status}${code}`)),
    text("p", error?.message || "something went wrong"),
    list);
}

/** Runs `load` into `target`: a busy state first, then what it returns, or the error. */
export async function loadInto(target, load) {
  target.setAttribute("aria-busy", "true");
  clear(target, h("p", { class: "muted loading" }, "Loading…"));
  try {
    clear(target, await load());
  } catch (error) {
    clear(target, errorBox(error));
  } finally {
    target.removeAttribute("aria-busy");
  }
}

export const empty = (message) => h("p", { class: "empty" }, message);

/** A JSON value for display: strings as they are, everything else as compact JSON. */
export function showValue(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}
