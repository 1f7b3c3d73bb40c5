// The memory inspector: the settings bar, the sidebar, and the page for the current route.

import { clear, h, text } from "./dom.js";
import { renderHotMemory } from "./hot-memory.js";
import { renderInject } from "./inject.js";
import { renderMemories } from "./memories.js";
import { renderReports } from "./reports.js";
import { TABS, currentRoute, href, interceptLinks } from "./router.js";
import { renderHome, renderMissing, renderRecent, setUpOpenForm } from "./scopes.js";
import { renderSearch } from "./search.js";
import { loadSettings, rememberScope, saveSettings } from "./settings.js";

const VIEWS = {
  memories: renderMemories, search: renderSearch, "hot-memory": renderHotMemory, reports: renderReports,
  inject: renderInject,
};
const KIND_LABEL = { users: "User", projects: "Project" };

function setUpSettings(form) {
  const status = form.querySelector("#settings-status");
  const { tenant, token } = loadSettings();
  form.elements.tenant.value = tenant;
  form.elements.token.value = token;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    saveSettings({ tenant: form.elements.tenant.value, token: form.elements.token.value });
    status.textContent = "Saved";
    setTimeout(() => { status.textContent = ""; }, 2500);
    render(); // the current page again, with the new tenant
  });
}

function render() {
  const main = document.getElementById("main");
  const route = currentRoute();
  const recent = document.getElementById("recent");
  if (route.page === "home") {
    document.title = "Memory inspector · agent-memory";
    renderRecent(recent, null);
    renderHome(main);
    return;
  }
  if (route.page === "missing") {
    document.title = "No such page · Memory inspector";
    renderRecent(recent, null);
    renderMissing(main, route.path);
    return;
  }
  const { kind, id, tab } = route;
  rememberScope(kind, id);
  renderRecent(recent, route);
  const tabs = TABS[kind];
  const current = tabs.find((t) => t.id === tab);
  document.title = `${current.label} · ${KIND_LABEL[kind]} ${id} · Memory inspector`;
  const panel = h("div", { class: "panel", id: "panel", role: "region", "aria-label": current.label });
  clear(main,
    h("header", { class: "scope-head" },
      h("p", { class: "eyebrow" }, KIND_LABEL[kind]),
      text("h1", id, { class: "scope-title" })),
    h("nav", { class: "tabs", "aria-label": `${KIND_LABEL[kind]} pages` },
      tabs.map((t) => h("a", {
        href: href(kind, id, t.id), "data-link": true, class: t.id === tab ? "active" : null,
        "aria-current": t.id === tab ? "page" : null,
      }, t.label))),
    panel);
  VIEWS[tab](panel, { kind, id });
}

setUpSettings(document.getElementById("settings"));
setUpOpenForm(document.getElementById("open-scope"));
interceptLinks(document.body);
window.addEventListener("inspector:navigate", () => {
  render();
  document.getElementById("main").focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
render();
