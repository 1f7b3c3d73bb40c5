// The API over fetch: the tenant and token from the settings bar, errors as ApiError from the API's error JSON.

import { loadSettings } from "./settings.js";

const API_ROOT = document.querySelector('meta[name="api-root"]')?.content ?? "";

export class ApiError extends Error {
  constructor(status, code, message, details = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** A path segment: ids and hot-memory keys (which may be Chinese) are URL-encoded. */
export const seg = (value) => encodeURIComponent(value);

export async function request(method, path, body) {
  const { tenant, token } = loadSettings();
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (tenant) headers["X-Tenant-Id"] = tenant;
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(API_ROOT + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, "network_error", `the API did not answer (${error.message})`);
  }
  const text = await response.text();
  let payload = null;
  try {
    payload = text ? JSON.parse(text) : null;
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const error = payload?.error;
    if (error && typeof error === "object") {
      throw new ApiError(response.status, String(error.code ?? "error"), String(error.message ?? ""), error.details);
    }
    // API Gateway's own answers ({"message": "Unauthorized"}) and anything else that is not our error shape.
    throw new ApiError(response.status, `http_${response.status}`, payload?.message ?? (text.slice(0, 300) || response.statusText));
  }
  return payload;
}

export const api = {
  listMemories: (userId, { memoryType, cursor, limit = 20 } = {}) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (memoryType) query.set("memory_type", memoryType);
    if (cursor) query.set("cursor", cursor);
    return request("GET", `/v1/users/${seg(userId)}/memories?${query}`);
  },
  getMemory: (userId, key) => request("GET", `/v1/users/${seg(userId)}/memories/${seg(key)}`),
  search: (userId, body) => request("POST", `/v1/users/${seg(userId)}/memories/search`, body),
  hotMemory: (kind, id) => request("GET", `/v1/${kind}/${seg(id)}/hot-memory`),
  putHotMemory: (kind, id, type, key, body) =>
    request("PUT", `/v1/${kind}/${seg(id)}/hot-memory/${seg(type)}/${seg(key)}`, body),
  deleteHotMemory: (kind, id, type, key) =>
    request("DELETE", `/v1/${kind}/${seg(id)}/hot-memory/${seg(type)}/${seg(key)}`),
  reports: (kind, id) => request("GET", `/v1/${kind}/${seg(id)}/reports`),
  inject: (body) => request("POST", "/v1/context/inject", body),
  retention: () => request("GET", "/v1/retention"),
};
