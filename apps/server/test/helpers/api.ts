import { inject } from "vitest";
import { SCOPES } from "../../src/workspaces/api-keys.js";
import { findOperation, responseValidator, type SpecOperation } from "./contract.js";

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** The spec operation the request matched, if any. */
  operationId: string | undefined;
}

export interface RequestOptions {
  /** Another server than the run's shared one (e.g. one with a tight rate limit). */
  baseUrl?: string;
  key?: string;
  body?: unknown;
  /** A body sent as is (broken JSON, wrong type…). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | string[]>;
}

/**
 * Sends a real HTTP request and checks the answer against the spec: the status must be one the
 * operation documents, and the JSON body must match that response's schema. Every test goes
 * through here, so no response escapes the contract.
 */
export async function request<T = any>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const url = new URL(path, options.baseUrl ?? inject("baseUrl"));
  for (const [name, value] of Object.entries(options.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.Authorization ??= `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  const isJson = response.headers.get("content-type")?.includes("application/json");
  const parsed = isJson && text ? JSON.parse(text) : text;
  const operation = findOperation(method, url.pathname);
  if (operation) assertMatchesSpec(operation, response.status, parsed);
  else if (response.status >= 400) assertErrorShape(response.status, parsed);
  if (!response.headers.get("request-id")?.startsWith("req_")) throw new Error("response lacks Request-Id");
  return {
    status: response.status,
    headers: response.headers,
    body: parsed as T,
    operationId: operation?.operationId,
  };
}

/**
 * The public spec's `default` response documents the body of any other error, so the validator
 * accepts them; the tests still insist that every status the server answers is listed by number,
 * except the 500 that only a server bug produces.
 */
export function assertMatchesSpec(operation: SpecOperation, status: number, body: unknown): void {
  if (status !== 500 && !(String(status) in operation.responses)) {
    throw new Error(`${operation.operationId} answered ${status}, a status its spec does not list`);
  }
  const validate = responseValidator(operation, status);
  if (validate && !validate(body)) {
    throw new Error(
      `${operation.operationId} ${status}: body does not match the spec: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
  // Every error code an operation answers is one its `x-error-codes` lists, so the list the docs
  // and the SDK read is checked by every test that sees an error.
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  if (status >= 400 && typeof code === "string" && !operation.errorCodes.includes(code)) {
    throw new Error(
      `${operation.operationId} answered ${status} ${code}, a code its x-error-codes does not list`,
    );
  }
}

/** Answers outside any operation (unknown route, 405) still use the documented error body. */
export function assertErrorShape(status: number, body: unknown): void {
  const validate = responseValidator(findOperation("GET", "/open/v1/contacts/x") as SpecOperation, 404);
  if (!validate?.(body))
    throw new Error(`${status}: error body does not match the spec: ${JSON.stringify(body)}`);
}

export const api = {
  get: <T = any>(path: string, options?: RequestOptions) => request<T>("GET", path, options),
  post: <T = any>(path: string, options?: RequestOptions) => request<T>("POST", path, options),
  patch: <T = any>(path: string, options?: RequestOptions) => request<T>("PATCH", path, options),
  delete: <T = any>(path: string, options?: RequestOptions) => request<T>("DELETE", path, options),
};

export const ALL_SCOPES = [...SCOPES];

/** The admin API, with the run's ADMIN_TOKEN. */
export function admin(method: string, path: string, body?: unknown, baseUrl?: string) {
  return request(method, path, {
    baseUrl,
    body,
    headers: { Authorization: `Bearer ${inject("adminToken")}` },
  });
}

/** A fresh workspace and a key with the given scopes: each test file gets its own world. */
export async function newWorkspace(
  scopes: string[] = ALL_SCOPES,
  baseUrl?: string,
): Promise<{ workspaceId: string; key: string }> {
  const workspace = await admin("POST", "/admin/v1/workspaces", { name: "test workspace" }, baseUrl);
  if (workspace.status !== 201) throw new Error(`workspace create failed: ${JSON.stringify(workspace.body)}`);
  const key = await newKey(workspace.body.id, scopes, baseUrl);
  return { workspaceId: workspace.body.id, key };
}

export async function newKey(workspaceId: string, scopes: string[], baseUrl?: string): Promise<string> {
  const body = { name: "test key", scopes };
  const response = await admin("POST", `/admin/v1/workspaces/${workspaceId}/api-keys`, body, baseUrl);
  if (response.status !== 201) throw new Error(`key create failed: ${JSON.stringify(response.body)}`);
  return response.body.key;
}
