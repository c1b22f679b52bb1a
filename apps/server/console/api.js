// The console's client of the public API: every call goes to /console/api/v1/…, which the
// server hands to the /open/v1 route of the same name as the session's workspace. Calls that
// change something carry the session's CSRF token.

let csrfToken = "";

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `The server answered ${status}.`);
    this.status = status;
    this.code = body?.error?.code;
    this.param = body?.error?.param;
  }
}

async function send(url, method, body) {
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

/** `path` relative to /open/v1, e.g. `webhook-endpoints`; `query` values may be arrays. */
export function api(method, path, { query, body } = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  const search = params.size ? `?${params}` : "";
  return send(`/console/api/v1/${path}${search}`, method, body);
}

export const get = (path, query) => api("GET", path, { query });

/** Exchanges a link's one-time token for the session cookie; answers the session. */
export async function openSession(token) {
  const session = await send("/console/session", "POST", { token });
  csrfToken = session.csrf_token;
  return session;
}

/** The session of the cookie this browser holds, if any. */
export async function currentSession() {
  const session = await send("/console/session", "GET");
  csrfToken = session.csrf_token;
  return session;
}

let eventTypes;
/** The event types of the public spec (its `EventType` enum), read once. */
export async function knownEventTypes() {
  eventTypes ??= get("openapi.json").then((spec) => spec.components.schemas.EventType.enum);
  return eventTypes;
}

let endpointUrls;
/** Endpoint id → URL, for naming where events went; read once per page view. */
export function endpointNames(fresh = false) {
  if (fresh || !endpointUrls) {
    endpointUrls = get("webhook-endpoints", { limit: 100 }).then(
      (page) => new Map(page.data.map((endpoint) => [endpoint.id, endpoint.url])),
    );
  }
  return endpointUrls;
}

/** Ends the session (its cookie is cleared by the answer). */
export async function endSession() {
  await send("/console/session", "DELETE");
}
