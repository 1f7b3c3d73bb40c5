// Page routes under /ui/ (the server answers index.html for each, so deep links work): the start page,
// /ui/users/{id}[/{tab}] and /ui/projects/{id}[/{tab}].

const UI_ROOT = new URL(document.baseURI).pathname; // "/ui/", or "/{stage}/ui/" behind a named stage

export const TABS = {
  users: [
    { id: "memories", label: "Memories" },
    { id: "search", label: "Search" },
    { id: "hot-memory", label: "Hot memory" },
    { id: "reports", label: "Reports" },
    { id: "inject", label: "Inject preview" },
  ],
  projects: [
    { id: "hot-memory", label: "Hot memory" },
    { id: "reports", label: "Reports" },
  ],
};

export function href(kind, id, tab) {
  if (!kind) return UI_ROOT;
  const base = `${UI_ROOT}${kind}/${encodeURIComponent(id)}`;
  return tab && tab !== TABS[kind][0].id ? `${base}/${tab}` : base;
}

/** {page: "home"} | {page: "scope", kind, id, tab} | {page: "missing", path}. */
export function currentRoute() {
  const path = location.pathname;
  const rest = path.startsWith(UI_ROOT) ? path.slice(UI_ROOT.length) : "";
  const parts = rest.split("/").filter(Boolean);
  if (parts.length === 0) return { page: "home" };
  const [kind, rawId, tab] = parts;
  if ((kind === "users" || kind === "projects") && rawId && parts.length <= 3) {
    let id;
    try {
      id = decodeURIComponent(rawId);
    } catch {
      return { page: "missing", path };
    }
    const tabs = TABS[kind];
    const chosen = tab ?? tabs[0].id;
    if (tabs.some((t) => t.id === chosen)) return { page: "scope", kind, id, tab: chosen };
  }
  return { page: "missing", path };
}

export function navigate(url) {
  if (url !== location.pathname + location.search) history.pushState(null, "", url);
  window.dispatchEvent(new Event("inspector:navigate"));
}

/** Same-page navigation for links marked data-link (others, and modified clicks, behave as usual). */
export function interceptLinks(root) {
  root.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-link]");
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(new URL(link.href).pathname);
  });
  window.addEventListener("popstate", () => window.dispatchEvent(new Event("inspector:navigate")));
}
