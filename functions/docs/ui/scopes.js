// The sidebar (open a user or project by id; the recently opened ones) and the start page.
// The API has no route that lists users, so scopes are opened by id and remembered in this browser.

import { clear, h, text } from "./dom.js";
import { forgetScope, recentScopes } from "./settings.js";
import { href, navigate } from "./router.js";

const KIND_LABEL = { users: "user", projects: "project" };

export function setUpOpenForm(form) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const kind = form.elements.kind.value;
    const id = form.elements.id.value.trim();
    if (!id) return;
    form.reset();
    navigate(href(kind, id));
  });
}

export function renderRecent(list, current) {
  const scopes = recentScopes();
  if (!scopes.length) {
    clear(list, h("li", { class: "muted small" }, "Scopes you open appear here."));
    return;
  }
  clear(list, scopes.map(({ kind, id }) => {
    const active = current && current.kind === kind && current.id === id;
    return h("li", { class: active ? "active" : null },
      h("a", { href: href(kind, id), "data-link": true, "aria-current": active ? "page" : null },
        h("span", { class: `kind kind-${kind}` }, KIND_LABEL[kind]),
        text("span", id, { class: "scope-id" })),
      h("button", {
        type: "button", class: "icon-button", title: `Forget ${KIND_LABEL[kind]} ${id}`,
        "aria-label": `Forget ${KIND_LABEL[kind]} ${id}`,
        onclick: () => { forgetScope(kind, id); renderRecent(list, current); },
      }, "×"));
  }));
}

export function renderHome(main) {
  const scopes = recentScopes();
  clear(main,
    h("section", { class: "home card" },
      h("h1", {}, "Memory inspector"),
      h("p", {}, "See what the memory service knows about a user or a project: current memories and each one's "
        + "history, search with its score breakdown, hot memory (editable), weekly reports, and what context "
        + "injection would put in front of the model."),
      h("ol", { class: "steps" },
        h("li", {}, "Enter the tenant (", h("code", {}, "X-Tenant-Id"), ", local stack) or a bearer token "
          + "(deployed) in the bar above, and save."),
        h("li", {}, "Open a user or project by id in the sidebar."),
        h("li", {}, "Bookmark any page: ", h("code", {}, "/ui/users/{id}"), ", ", h("code", {}, "/ui/users/{id}/search"),
          ", ", h("code", {}, "/ui/projects/{id}/hot-memory"), " and so on.")),
      scopes.length
        ? h("p", {}, "Or go back to ",
          h("a", { href: href(scopes[0].kind, scopes[0].id), "data-link": true },
            `${KIND_LABEL[scopes[0].kind]} `, text("span", scopes[0].id)), ".")
        : null));
}

export function renderMissing(main, path) {
  clear(main, h("section", { class: "card" },
    h("h1", {}, "No such page"),
    h("p", {}, "The inspector has no page at ", h("code", { text: path }), "."),
    h("p", {}, h("a", { href: href(), "data-link": true }, "Start page"))));
}
