import type { Context, Next } from "koa";
import { AppError } from "../errors.js";
import { sameToken } from "../token-hash.js";

/**
 * What a request's authentication reads of its API key. The keys themselves are the workspaces'
 * (workspaces/api-keys.ts); the platform names only this much, so it imports no capability.
 */
export interface AuthenticatedKey {
  id: string;
  workspace_id: string;
  scopes: readonly string[];
}

/** Finds the live key a bearer token stands for (workspaces/api-keys.ts `ApiKeys`). */
export interface KeyAuthenticator {
  authenticate(token: string): Promise<AuthenticatedKey | null>;
}

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;

function bearerToken(ctx: Context): string {
  const match = BEARER.exec(ctx.get("Authorization"));
  if (!match?.[1]) {
    throw new AppError(401, "missing_api_key", "Send your API key as `Authorization: Bearer <API_KEY>`.", {
      headers: { "WWW-Authenticate": 'Bearer realm="deskline"' },
    });
  }
  return match[1];
}

/** The authenticated API key of this request (set by `requireApiKey`). */
export function apiKeyOf(ctx: Context): AuthenticatedKey {
  return ctx.state.apiKey as AuthenticatedKey;
}

/** Authenticates the bearer key and checks the operation's scope (from the spec's `security`). */
export function requireApiKey(apiKeys: KeyAuthenticator, scope: string | undefined) {
  return async (ctx: Context, next: Next) => {
    // A webhook console request arrives already authenticated by its session cookie, as a key
    // of the session's workspace and scopes (console/gateway.ts); the scope check still applies.
    const key =
      (ctx.state.consoleKey as AuthenticatedKey | undefined) ??
      (await apiKeys.authenticate(bearerToken(ctx)));
    if (!key) {
      throw new AppError(401, "invalid_api_key", "The API key is unknown or has been revoked.", {
        headers: {
          "WWW-Authenticate": 'Bearer realm="deskline", error="invalid_token"',
        },
      });
    }
    if (scope && !key.scopes.includes(scope)) {
      throw new AppError(
        403,
        "insufficient_scope",
        `This API key lacks the \`${scope}\` scope; issue a key that has it.`,
        {
          headers: {
            "WWW-Authenticate": `Bearer realm="deskline", error="insufficient_scope", scope="${scope}"`,
          },
        },
      );
    }
    ctx.state.apiKey = key;
    await next();
  };
}

/** The admin API: bearer ADMIN_TOKEN, compared in constant time; off (404) when unset. */
export function requireAdmin(adminToken: string | undefined) {
  const expected = adminToken || undefined;
  return async (ctx: Context, next: Next) => {
    if (!expected) {
      throw new AppError(404, "route_not_found", "The admin API is off; set ADMIN_TOKEN to turn it on.");
    }
    assertToken(
      ctx,
      expected,
      "deskline-admin",
      "The admin token is wrong; send `Authorization: Bearer $ADMIN_TOKEN`.",
    );
    await next();
  };
}

/** GET /metrics: bearer METRICS_TOKEN, compared in constant time; open when unset. */
export function requireMetricsToken(metricsToken: string | undefined) {
  const expected = metricsToken || undefined;
  return async (ctx: Context, next: Next) => {
    if (expected) {
      assertToken(
        ctx,
        expected,
        "deskline-metrics",
        "The metrics token is wrong; send `Authorization: Bearer $METRICS_TOKEN`.",
      );
    }
    await next();
  };
}

/** A fixed operator token (not an API key): present, and equal in constant time (platform/token-hash.ts). */
function assertToken(ctx: Context, expected: string, realm: string, wrong: string): void {
  if (!sameToken(bearerToken(ctx), expected)) {
    throw new AppError(401, "invalid_api_key", wrong, {
      headers: {
        "WWW-Authenticate": `Bearer realm="${realm}", error="invalid_token"`,
      },
    });
  }
}
