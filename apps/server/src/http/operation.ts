import type { Router } from "@koa/router";
import type { Context, Middleware } from "koa";
import { AppError } from "../errors.js";
import { readJsonBody } from "./body.js";
import type { Operation } from "./openapi.js";
import { assertValid } from "./validate.js";

/** What a handler answers; the chain writes it. */
export interface Reply {
  status: number;
  body: unknown;
}

export type Handler<Q = Record<string, unknown>, B = Record<string, unknown>> = (input: {
  ctx: Context;
  query: Q;
  body: B;
  id: string;
}) => Promise<Reply>;

/** Reads and validates the query and body against the operation's schemas from the spec. */
export function parseRequest(operation: Operation, bodyLimit: number): Middleware {
  return async (ctx, next) => {
    // A copy: Ajv coerces in place ("10" → 10, a single `tag` → ["tag"]).
    const query: Record<string, unknown> = { ...ctx.query };
    assertValid(operation.validateQuery, query, "query");
    ctx.state.query = query;
    if (operation.validateBody) {
      const body = await readJsonBody(ctx, bodyLimit);
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
 * Mounts one spec operation on the router: its method and path come from the spec (`{id}` →
 * `:id`), so a route cannot drift from its documentation.
 */
export function mount<Q, B>(
  router: Router,
  operation: Operation,
  middlewares: Middleware[],
  handler: Handler<Q, B>,
): void {
  const path = operation.path.replace(/\{(\w+)\}/g, ":$1");
  const run: Middleware = async (ctx) => {
    const reply = await handler({
      ctx,
      query: ctx.state.query as Q,
      body: (ctx.state.body ?? {}) as B,
      id: (ctx.params as Record<string, string>).id ?? "",
    });
    ctx.status = reply.status;
    ctx.body = reply.body;
  };
  router.register(path, [operation.method], [...middlewares, run], { name: operation.operationId });
}
