import type { Router } from "@koa/router";
import type { ReplyOf } from "../../spec/types.js";
import type { DatabaseConnection } from "../database/client.js";
import type { RouteKit } from "./route-kit.js";

/**
 * Probes (no auth), served by every process, workers included (worker-app.ts): /healthz says the
 * process is up, /readyz that the database answers and this version's migrations and indexes are
 * done (`migrating` until then, docs/decisions.md "Ready means migrated"); load balancers route
 * on /readyz and orchestrators probe workers with both.
 */
export function probeRoutes(router: Router, database: Pick<DatabaseConnection, "readiness">): void {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", async (ctx) => {
    const status = await database.readiness();
    ctx.status = status === "ready" ? 200 : 503;
    ctx.body = { status };
  });
}

/**
 * The API's operations endpoints: the probes, and the two spec documents, served from the same
 * file the server validates with.
 */
export function opsRoutes(router: Router, { op, database, openapi }: RouteKit): void {
  probeRoutes(router, database);
  const { text, json } = openapi.documents.public;
  op("getOpenApiYaml", async ({ ctx }) => {
    // `text/yaml` only when asked for: the spec documents it for client generators that read no
    // `application/yaml` (docs/decisions.md); without an Accept that prefers it, `application/yaml`.
    ctx.type =
      ctx.accepts("application/yaml", "text/yaml") === "text/yaml" ? "text/yaml" : "application/yaml";
    // The spec's schema is the mapping a YAML reader gets (that is how fuzzers check it); the
    // bytes on the wire are the file's own text, comments and order kept.
    return { status: 200, body: text as unknown as ReplyOf<"getOpenApiYaml">["body"] };
  });
  op("getOpenApiJson", async () => ({ status: 200, body: json }));
}
