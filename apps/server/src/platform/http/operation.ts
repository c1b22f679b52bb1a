import type { Router } from "@koa/router";
import type { Context, Middleware } from "koa";
import type { BodyOf, OperationId, QueryOf, ReplyOf } from "../../spec/types.js";
import { AppError } from "../errors.js";
import { escapeRegex } from "../regex.js";
import { MAX_BODY_DEPTH, readJsonBody } from "./body.js";
import type { Operation } from "./openapi.js";
import { assertValid } from "./validate.js";

/** What a handler is given: the validated query and body, and the path's `{id}`. */
export interface HandlerInput<Query = unknown, Body = unknown> {
  ctx: Context;
  query: Query;
  body: Body;
  id: string;
}

/**
 * One handler type per `operationId`, its input and answer typed from the spec. A table of
 * concrete types rather than one generic signature: checked against a concrete type, a handler's
 * `object: "list"` stays a literal instead of widening to `string`.
 */
type Handlers = {
  [Id in OperationId]: (input: HandlerInput<QueryOf<Id>, BodyOf<Id>>) => Promise<ReplyOf<Id>>;
};
export type Handler<Id extends OperationId> = Handlers[Id];

/** Any handler, as the router runs it once the request has been validated. */
type AnyHandler = (input: HandlerInput) => Promise<{ status: number; body: unknown }>;

/** The headers the operation declares, under the spec's names; absent ones are left out. */
function declaredHeaders(ctx: Context, operation: Operation): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name } of operation.parameters.header) {
    if (ctx.headers[name.toLowerCase()] !== undefined) out[name] = ctx.get(name);
  }
  return out;
}

/** Reads and validates the headers, query and body against the operation's schemas from the spec. */
export function parseRequest(operation: Operation, bodyLimit: number): Middleware {
  return async (ctx, next) => {
    assertValid(operation.validateHeaders, declaredHeaders(ctx, operation), "header");
    // A copy: Ajv coerces in place ("10" → 10, a single `tag` → ["tag"]).
    const query: Record<string, unknown> = { ...ctx.query };
    assertValid(operation.validateQuery, query, "query");
    ctx.state.query = query;
    if (operation.validateBody) {
      let body = await readJsonBody(ctx, { bytes: bodyLimit, depth: MAX_BODY_DEPTH });
      if (body === undefined) {
        // The spec says whether the body is required (a PATCH's is: `{}` changes nothing, no body
        // is a mistake) or optional (rotating a secret): an optional one is read as `{}`.
        if (operation.bodyRequired) {
          // Name the first required field where there is one (a create), as for `{}`.
          assertValid(operation.validateBody, {}, "body");
          throw new AppError(
            400,
            "parameter_missing",
            "This operation needs a JSON request body (`{}` where it changes nothing).",
          );
        }
        body = {};
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new AppError(400, "parameter_invalid", "The request body must be a JSON object.");
      }
      assertValid(operation.validateBody, body, "body");
      ctx.state.body = body;
    }
    await next();
  };
}

/**
 * A spec path as the router's pattern. A `{param}` segment takes any value but the literal
 * segments other paths have in its place: `/contacts/batch` is then no `/contacts/{id}`, so
 * PATCH on it is a 405 naming POST rather than an update of a contact called "batch". (An id of
 * the wrong form still reaches its operation, and is `404 resource_missing` there.) Like the
 * router's own paths: any letter case, an optional trailing slash.
 */
export function routePattern(path: string, allPaths: Iterable<string>): RegExp {
  const segments = path.split("/");
  const others = [...allPaths].map((other) => other.split("/"));
  const source = segments.map((segment, index) => {
    if (!/^\{\w+\}$/.test(segment)) return escapeRegex(segment);
    const prefix = segments.slice(0, index).join("/");
    const literals = others
      .filter((other) => other.slice(0, index).join("/") === prefix)
      .map((other) => other[index])
      .filter((other): other is string => other !== undefined && !/^\{\w+\}$/.test(other));
    const unlike = literals.length
      ? `(?!(?:${[...new Set(literals)].map(escapeRegex).join("|")})(?:/|$))`
      : "";
    return `(${unlike}[^/]+)`;
  });
  return new RegExp(`^${source.join("/")}/?$`, "i");
}

/** The path's `{id}`, as the route pattern captured it ("" on paths without one). */
export const pathId = (ctx: Context): string =>
  (ctx as Context & { captures?: string[] }).captures?.[0] ?? "";

/**
 * Mounts one spec operation on the router: its method and path come from the spec, so a route
 * cannot drift from its documentation.
 */
export function mount<Id extends OperationId>(
  router: Router,
  operation: Operation & { operationId: Id },
  /** Every path of the spec, so that a `{param}` never takes a sibling's literal segment. */
  allPaths: Iterable<string>,
  middlewares: Middleware[],
  handler: Handler<Id>,
): void {
  // The one place validated input meets its type: parseRequest checked the query and body
  // against the very schemas QueryOf<Id> and BodyOf<Id> were generated from.
  const run: Middleware = async (ctx) => {
    const reply = await (handler as AnyHandler)({
      ctx,
      query: ctx.state.query,
      body: ctx.state.body ?? {},
      id: pathId(ctx),
    });
    ctx.status = reply.status;
    ctx.body = reply.body;
  };
  // Routes are mounted as regular expressions, so the spec path (`/open/v1/contacts/{id}`) is
  // handed on in `ctx.state.routeTemplate`: the request span's `http.route` (platform/telemetry/sdk.ts).
  const template: Middleware = (ctx, next) => {
    ctx.state.routeTemplate = operation.path;
    return next();
  };
  router.register(
    routePattern(operation.path, allPaths),
    [operation.method],
    [template, ...middlewares, run],
    {
      name: operation.operationId,
      pathAsRegExp: true,
    },
  );
}
