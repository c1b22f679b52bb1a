// The console's client of the public API: every call goes to api/v1/… beside the page (/console/api/v1/…, under
// any path a proxy mounts the server at), which the
// server hands to the /open/v1 route of the same name as the session's workspace. Calls that
// change something carry the session's CSRF token.

let csrfToken = "";

/** @typedef {import("./types.js").EventType} EventType */
/** @typedef {import("./types.js").WebhookEndpoint} WebhookEndpoint */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{ error?: { message?: string, code?: string, param?: string } } | null} body
   */
  constructor(status, body) {
    super(body?.error?.message ?? `The server answered ${status}.`);
    this.status = status;
    this.code = body?.error?.code;
    this.param = body?.error?.param;
  }
}

/**
 * @param {string} url
 * @param {string} method
 * @param {unknown} [body]
 * @returns {Promise<any>} the answer's JSON: each caller names its type from ./types
 */
async function send(url, method, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/**
 * `path` relative to /open/v1, e.g. `webhook-endpoints`; `query` values may be arrays.
 * @param {string} method
 * @param {string} path
 * @param {{ query?: Record<string, unknown>, body?: unknown }} [options]
 * @returns {Promise<any>}
 */
export function api(method, path, { query, body } = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  const search = params.size ? `?${params}` : "";
  return send(`api/v1/${path}${search}`, method, body);
}

/**
 * @param {string} path
 * @param {Record<string, unknown>} [query]
 * @returns {Promise<any>}
 */
export const get = (path, query) => api("GET", path, { query });

/**
 * Exchanges a link's one-time token for the session cookie; answers the session.
 * @param {string} token
 * @returns {Promise<import("./types.js").ConsoleSession>}
 */
export async function openSession(token) {
  const session = await send("session", "POST", { token });
  csrfToken = session.csrf_token;
  return session;
}

/**
 * The session of the cookie this browser holds, if any.
 * @returns {Promise<import("./types.js").ConsoleSession>}
 */
export async function currentSession() {
  const session = await send("session", "GET");
  csrfToken = session.csrf_token;
  return session;
}

/** @type {Promise<EventType[]> | undefined} */
let eventTypes;
/**
 * The event types the server sends (listEventTypes), read once.
 * @returns {Promise<EventType[]>}
 */
export async function knownEventTypes() {
  eventTypes ??= get("event-types").then(
    /** @param {import("./types.js").EventTypeList} list */ (list) => list.data.map((type) => type.type),
  );
  return eventTypes;
}

/** @type {Promise<Map<string, string>> | undefined} */
let endpointUrls;
/** Endpoint id → URL, for naming where events went; read once per page view. */
export function endpointNames(fresh = false) {
  if (fresh || !endpointUrls) {
    endpointUrls = get("webhook-endpoints", { limit: 100 }).then(
      /** @param {import("./types.js").Page<WebhookEndpoint>} page */
      (page) => new Map(page.data.map((endpoint) => [endpoint.id, endpoint.url])),
    );
  }
  return endpointUrls;
}

/** Ends the session (its cookie is cleared by the answer). */
export async function endSession() {
  await send("session", "DELETE");
}
