// The few admin API calls the CLI makes (`deskline trigger` stands in for a channel: a customer
// writes in, a conversation is assigned), typed by the admin spec through openapi-fetch, with the
// SDK's error classes so failures read like every other API error.
import { errorFromResponse } from "@deskline/sdk";
import type { paths } from "@deskline/spec/admin";
import createClient from "openapi-fetch";
import { UsageError } from "./errors.js";
import { terminal } from "./terminal.js";

export const ADMIN_TOKEN_VARIABLE = "DESKLINE_ADMIN_TOKEN";

export type AdminClient = ReturnType<typeof adminClient>;

/** A client of `${baseUrl}/admin/v1` with `$DESKLINE_ADMIN_TOKEN`, or a usage error without one. */
export function adminClient(baseUrl: string, env: NodeJS.ProcessEnv = terminal().env) {
  const token = env[ADMIN_TOKEN_VARIABLE];
  if (!token) {
    throw new UsageError(
      `this needs the admin API: set ${ADMIN_TOKEN_VARIABLE} to the server's ADMIN_TOKEN ` +
        "(customer messages and assignments come from channels, which only the admin API stands in for)",
    );
  }
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** The data of an openapi-fetch result, or the API error it carries, thrown. */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw errorFromResponse(result.response, result.error);
  return result.data;
}
