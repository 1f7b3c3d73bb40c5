// The connection settings and the recently opened scopes, kept in this browser's localStorage.

const SETTINGS_KEY = "agent-memory-inspector.settings";
const RECENT_KEY = "agent-memory-inspector.recent";
const MAX_RECENT = 12;

function read(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key));
    return value ?? fallback;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full store: the settings last for this page only.
  }
}

/** {tenant, token}: sent as X-Tenant-Id and Authorization: Bearer. */
export function loadSettings() {
  const saved = read(SETTINGS_KEY, {});
  return { tenant: String(saved.tenant ?? ""), token: String(saved.token ?? "") };
}

export function saveSettings({ tenant, token }) {
  write(SETTINGS_KEY, { tenant: tenant.trim(), token: token.trim() });
}

/** [{kind: "users" | "projects", id}], most recent first. */
export function recentScopes() {
  const list = read(RECENT_KEY, []);
  return Array.isArray(list)
    ? list.filter((s) => s && (s.kind === "users" || s.kind === "projects") && typeof s.id === "string")
    : [];
}

export function rememberScope(kind, id) {
  const rest = recentScopes().filter((s) => !(s.kind === kind && s.id === id));
  write(RECENT_KEY, [{ kind, id }, ...rest].slice(0, MAX_RECENT));
}

export function forgetScope(kind, id) {
  write(RECENT_KEY, recentScopes().filter((s) => !(s.kind === kind && s.id === id)));
}
