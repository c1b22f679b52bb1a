import type { Router } from "@koa/router";
import type { Context, Middleware } from "koa";
import type { Config } from "../config.js";
import type { Store } from "../db/store.js";
import { apiKeyOf, requireAdmin, requireApiKey } from "../http/auth.js";
import { idempotency } from "../http/idempotency.js";
import type { OpenApi } from "../http/openapi.js";
import { type Handler, mount, parseRequest } from "../http/operation.js";
import { rateLimit } from "../http/rate-limit.js";

/** What a route module needs: the store, and a way to mount an operation of the spec. */
export interface RouteKit {
  store: Store;
  config: Config;
  openapi: OpenApi;
  /** Mounts a spec operation with its whole chain: auth → rate limit → parse → idempotency. */
  op<Q = Record<string, never>, B = Record<string, never>>(operationId: string, handler: Handler<Q, B>): void;
}

/** The workspace of the authenticated API key. */
export const workspaceOf = (ctx: Context): string => apiKeyOf(ctx).workspace_id;

export function createRouteKit(router: Router, store: Store, config: Config, openapi: OpenApi): RouteKit {
  const limiter = rateLimit(config.rateLimitPerSecond, config.rateLimitBurst);
  const admin = requireAdmin(config.adminToken);
  const adminWorkspace = (ctx: Context) => `admin:${(ctx.params as Record<string, string>).id ?? ""}`;
  return {
    store,
    config,
    openapi,
    op(operationId, handler) {
      const operation = openapi.operations.get(operationId);
      if (!operation) throw new Error(`operation ${operationId} is not in the spec`);
      const isAdmin = operation.path.startsWith("/admin/");
      const chain: Middleware[] = [];
      if (isAdmin) chain.push(admin);
      else if (operation.authenticated) chain.push(requireApiKey(store.apiKeys, operation.scope), limiter);
      chain.push(parseRequest(operation, config.bodyLimitBytes));
      if (operation.method === "POST") {
        chain.push(idempotency(store.idempotencyKeys, isAdmin ? adminWorkspace : workspaceOf));
      }
      mount(router, operation, chain, handler);
    },
  };
}
