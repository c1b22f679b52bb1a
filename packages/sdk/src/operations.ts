// Type-level views of the generated spec types (params, bodies, results per path and method) and
// the one runtime call every resource method goes through: openapi-fetch by path, then throw on
// an error answer. Resource methods never write a shape by hand.

import type { paths } from "@deskline/spec/openapi";
import type { BodyOf, QueryOf } from "@deskline/spec/operation";
import { type RequestOptions, requestInit } from "./attempt-fetch.js";
import type { ClientContext } from "./client.js";
import { errorFromResponse } from "./errors.js";

export type Method = "get" | "post" | "patch" | "delete";

/** The spec paths that have an operation for `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

export type OperationOf<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** Query parameters and the JSON request body of an operation (the body `never` when it takes none). */
export type { BodyOf, QueryOf };

/** The body of the operation's success answer (200, 201, or 202 for work it queued). */
export type ResultOf<O> = O extends { responses: infer R }
  ? R extends { 200: { content: { "application/json": infer J } } }
    ? J
    : R extends { 201: { content: { "application/json": infer J } } }
      ? J
      : R extends { 202: { content: { "application/json": infer J } } }
        ? J
        : never
  : never;

interface CallInput {
  pathParams?: Record<string, string>;
  query?: object;
  body?: unknown;
}

type LooseClient = Record<
  "GET" | "POST" | "PATCH" | "DELETE",
  (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>
>;

/** Calls one operation by method and path; resolves to the success body or throws a DesklineError. */
export async function call<T>(
  context: ClientContext,
  method: Method,
  path: string,
  input: CallInput,
  options: RequestOptions = {},
): Promise<T> {
  const client = context.client as unknown as LooseClient;
  const { data, error, response } = await client[method.toUpperCase() as keyof LooseClient](path, {
    params: { path: input.pathParams, query: input.query },
    body: input.body,
    ...requestInit(options),
  });
  if (!response.ok) throw errorFromResponse(response, error);
  return data as T;
}
