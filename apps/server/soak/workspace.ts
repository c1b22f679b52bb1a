import { okJson } from "../test/helpers/bearer-json.js";
import type { ListedEvent, RecordedAttempt } from "./audit.js";

/**
 * The crash trials' reads and set-up through the server's own API: a workspace and a key (admin
 * API), the webhook endpoint the receiver listens on, and every event the workspace has.
 */

const call = <T>(baseUrl: string, token: string, method: string, path: string, body?: unknown) =>
  okJson<T>(baseUrl, token, method, path, body, AbortSignal.timeout(30_000));

export interface SoakWorkspace {
  apiKey: string;
  /** The endpoint's signing secret, for the receiver's signature check. */
  secret: string;
  endpointId: string;
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
  const endpoint = await call<{ id: string; secret: string }>(
    baseUrl,
    key,
    "POST",
    "/open/v1/webhook-endpoints",
    {
      url: receiverUrl,
      description: "crash trials receiver",
    },
  );
  return { apiKey: key, secret: endpoint.secret, endpointId: endpoint.id };
}

/** Every item of a list operation, page by page (newest first, as the API lists them). */
async function readAll<T extends { id: string }>(
  baseUrl: string,
  apiKey: string,
  path: string,
): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  for (;;) {
    const query = `limit=100${after ? `&starting_after=${after}` : ""}`;
    const page = await call<{ data: T[]; has_more: boolean }>(baseUrl, apiKey, "GET", `${path}?${query}`);
    items.push(...page.data);
    if (!page.has_more || page.data.length === 0) return items;
    after = page.data.at(-1)?.id;
  }
}

/** Every event of the workspace. */
export function readAllEvents(baseUrl: string, apiKey: string): Promise<ListedEvent[]> {
  return readAll(baseUrl, apiKey, "/open/v1/events");
}

/** Every recorded delivery attempt of the endpoint (to tell a failed delivery from a lost one). */
export function readAllAttempts(
  baseUrl: string,
  apiKey: string,
  endpointId: string,
): Promise<RecordedAttempt[]> {
  return readAll(baseUrl, apiKey, `/open/v1/webhook-endpoints/${endpointId}/attempts`);
}
