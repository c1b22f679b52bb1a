import { inject } from "vitest";
import { admin, assertErrorShape, assertMatchesSpec } from "./api.js";
import { findOperation } from "./contract.js";

/**
 * The webhook console as a browser reaches it, over plain HTTP: mint a session with the admin
 * API, exchange the link's token for the cookie, and call the public API through the console's
 * gateway. A gateway answer is checked against the spec operation of the same /open/v1 path.
 */

export interface ConsoleSession {
  workspaceId: string;
  url: string;
  /** The link's one-time token (from the URL's fragment). */
  linkToken: string;
  expiresAt: string;
}

export async function mintSession(
  workspaceId: string,
  body?: unknown,
  baseUrl?: string,
): Promise<ConsoleSession> {
  const minted = await admin("POST", `/admin/v1/workspaces/${workspaceId}/console-sessions`, body, baseUrl);
  if (minted.status !== 201) throw new Error(`console session mint failed: ${JSON.stringify(minted.body)}`);
  const linkToken = new URLSearchParams(new URL(minted.body.url).hash.slice(1)).get("token") as string;
  return { workspaceId, url: minted.body.url, linkToken, expiresAt: minted.body.expires_at };
}

export interface Browserless {
  cookie: string;
  csrf: string;
  setCookie: string;
}

/** POST /console/session: the link's token for the cookie. */
export async function exchange(linkToken: string, baseUrl = inject("baseUrl")) {
  const response = await fetch(new URL("/console/session", baseUrl), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: linkToken }),
  });
  const body = (await response.json()) as any;
  if (response.status >= 400) assertErrorShape(response.status, body);
  const setCookie = response.headers.get("set-cookie") ?? "";
  const session: Browserless = { cookie: setCookie.split(";")[0] ?? "", csrf: body.csrf_token, setCookie };
  return { status: response.status, body, session };
}

/** A request through the console's gateway, checked against the public operation it becomes. */
export async function viaConsole(
  session: Partial<Browserless>,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: string | null; baseUrl?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (session.cookie) headers.Cookie = session.cookie;
  const csrf = options.csrf === undefined ? session.csrf : options.csrf;
  if (csrf) headers["X-CSRF-Token"] = csrf;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const url = new URL(`/console/api/v1/${path}`, options.baseUrl ?? inject("baseUrl"));
  const response = await fetch(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const body = (await response.json()) as any;
  const operation = findOperation(method, `/open/v1/${url.pathname.slice("/console/api/v1/".length)}`);
  if (operation) assertMatchesSpec(operation, response.status, body);
  else if (response.status >= 400) assertErrorShape(response.status, body);
  return { status: response.status, headers: response.headers, body };
}
