import type { ListedEvent } from "./audit.js";

/**
 * The crash trials' reads and set-up through the server's own API: a workspace and a key (admin
 * API), the webhook endpoint the receiver listens on, and every event the workspace has.
 */

async function call<T>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export interface SoakWorkspace {
  apiKey: string;
  /** The endpoint's signing secret, for the receiver's signature check. */
  secret: string;
}

/** A workspace with a key of every scope the trials use and an endpoint for every event type. */
export async function createSoakWorkspace(
  baseUrl: string,
  adminToken: string,
  receiverUrl: string,
): Promise<SoakWorkspace> {
  const workspace = await call<{ id: string }>(baseUrl, adminToken, "POST", "/admin/v1/workspaces", {
    name: "Crash trials",
  });
  const { key } = await call<{ key: string }>(
    baseUrl,
    adminToken,
    "POST",
    `/admin/v1/workspaces/${workspace.id}/api-keys`,
    {
      name: "soak",
      scopes: ["contacts:read", "contacts:write", "tickets:read", "tickets:write", "webhooks:manage"],
    },
  );
  const endpoint = await call<{ secret: string }>(baseUrl, key, "POST", "/open/v1/webhook-endpoints", {
    url: receiverUrl,
    description: "crash trials receiver",
  });
  return { apiKey: key, secret: endpoint.secret };
}

/** Every event of the workspace, page by page (newest first, as the API lists them). */
export async function readAllEvents(baseUrl: string, apiKey: string): Promise<ListedEvent[]> {
  const events: ListedEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const query = `limit=100${after ? `&starting_after=${after}` : ""}`;
    const page = await call<{ data: ListedEvent[]; has_more: boolean }>(
      baseUrl,
      apiKey,
      "GET",
      `/open/v1/events?${query}`,
    );
    events.push(...page.data);
    if (!page.has_more || page.data.length === 0) return events;
    after = page.data.at(-1)?.id;
  }
}
