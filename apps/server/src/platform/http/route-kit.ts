import type { Router } from "@koa/router";
import type { Context, Middleware } from "koa";
import type { OperationId } from "../../spec/types.js";
import type { HttpSettings } from "../config.js";
import type { DatabaseConnection } from "../database/client.js";
import { DatabaseNotReadyError, DatabaseUnavailableError } from "../errors.js";
import type { IdempotencyKeys } from "../idempotency/idempotency-keys.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { RateLimits } from "../rate-limit/rate-limits.js";
import { apiKeyOf, type KeyAuthenticator, requireAdmin, requireApiKey } from "./auth.js";
import { idempotency } from "./idempotency.js";
import type { OpenApi, Operation } from "./openapi.js";
import { type Handler, mount, parseRequest, pathId } from "./operation.js";
import { memoryBuckets, rateLimit, sharedBuckets } from "./rate-limit.js";

/**
 * What a route module needs: the stores it reads and writes, and a way to mount an operation of
 * the spec. Each capability's routes name the stores they use (`RouteKit<{ contacts: Contacts }>`),
 * so the platform knows no capability; app.ts passes the whole store (store.ts).
 */
export interface RouteKit<S = unknown, C = HttpSettings> {
  store: S;
  database: Pick<DatabaseConnection, "isConnected" | "isReady" | "readiness" | "ping">;
  /** The settings the routes read: the chain's own, and those a capability names (`RouteKit<S, PullSettings>`). */
  config: C;
  openapi: OpenApi;
  /** The process's metrics, for routes that count what they did (resends, recoveries). */
  metrics?: Metrics;
  /** The process's log, for routes that leave an audit line (an erasure). */
  logger: Logger;
  /**
   * The server's time (epoch ms): the database's in a server (docs/decisions.md, "One clock"), a
   * test's where one is given; what a route decides by when its answer depends on "now".
   */
  now: () => number;
  /**
   * Mounts a spec operation with its whole chain: auth → rate limit → parse → idempotency. The
   * handler's query, body and reply are typed from the spec by `operationId`.
   */
  op<Id extends OperationId>(operationId: Id, handler: Handler<Id>): void;
}

/** The stores the kit's own chain uses: API keys (auth), idempotency keys, shared rate limits. */
export interface KitStores {
  apiKeys: KeyAuthenticator;
  idempotencyKeys: IdempotencyKeys;
  rateLimits: RateLimits;
}

/**
 * A capability's handlers, each named after the operation it answers and made from the kit (the
 * stores and settings it closes over): `mountHandlers(kit, { listTickets, getTicket })`.
 */
export type HandlerMakers<K> = { [Id in OperationId]?: (kit: K) => Handler<Id> };

/** Mounts each handler under the operation its name is. */
export function mountHandlers<K extends Pick<RouteKit, "op">>(kit: K, makers: HandlerMakers<K>): void {
  for (const [operationId, make] of Object.entries(makers) as [
    OperationId,
    (kit: K) => Handler<OperationId>,
  ][]) {
    kit.op(operationId, make(kit));
  }
}

/** The workspace of the authenticated API key. */
export const workspaceOf = (ctx: Context): string => apiKeyOf(ctx).workspace_id;

/** A public operation's key lives in the workspace and answers its caller: the API key or console session. */
const callerScope = (ctx: Context) => ({ workspace: workspaceOf(ctx), caller: apiKeyOf(ctx).id });

/**
 * 503 before touching a database not yet reached, or reached but not yet migrated and indexed
 * for this version: a write then could fail half way or miss a unique index (see
 * DatabaseConnection).
 */
function requireDatabase(database: RouteKit["database"]): Middleware {
  return async (_ctx, next) => {
    if (!database.isConnected()) throw new DatabaseUnavailableError("not connected yet");
    if (!database.isReady()) throw new DatabaseNotReadyError("migrations and indexes not done yet");
    await next();
  };
}

export function createRouteKit<S extends KitStores, C extends HttpSettings>(
  router: Router,
  { store, database, config, openapi, metrics }: Omit<RouteKit<S, C>, "op" | "now" | "logger">,
  logger: Logger,
  clock: () => number = Date.now,
): RouteKit<S, C> {
  const databaseGate = requireDatabase(database);
  const rule = { perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst };
  const buckets = config.rateLimitShared
    ? sharedBuckets(store.rateLimits, rule, clock, logger)
    : memoryBuckets(rule, clock);
  const limiter = rateLimit(rule, buckets);
  const admin = requireAdmin(config.adminToken);
  // A key of the admin API lives with the workspace in its path; its one caller is the token.
  const adminScope = (ctx: Context) => ({ workspace: `admin:${pathId(ctx)}`, caller: "admin" });
  const allPaths = new Set([...openapi.operations.values()].map((operation) => operation.path));
  return {
    store,
    database,
    config,
    openapi,
    metrics,
    logger,
    now: clock,
    op(operationId, handler) {
      const operation = openapi.operations.get(operationId) as
        | (Operation & { operationId: typeof operationId })
        | undefined;
      if (!operation) throw new Error(`operation ${operationId} is not in the spec`);
      const isAdmin = operation.path.startsWith("/admin/");
      const chain: Middleware[] = [];
      if (operation.authenticated) chain.push(databaseGate);
      // The admin API's public page (its reference, `security: []`) needs no token.
      if (isAdmin && operation.authenticated) chain.push(admin);
      else if (operation.authenticated) chain.push(requireApiKey(store.apiKeys, operation.scope), limiter);
      chain.push(parseRequest(operation, config.bodyLimitBytes));
      if (operation.method === "POST") {
        chain.push(idempotency(store.idempotencyKeys, isAdmin ? adminScope : callerScope));
      }
      mount(router, operation, allPaths, chain, handler);
    },
  };
}
