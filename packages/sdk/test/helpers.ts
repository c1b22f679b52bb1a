// A Deskline client for a fresh workspace on the run's real server, whose every response is
// checked against the spec (status listed, body matching its schema) by the server's test helper.
import { ALL_SCOPES, assertMatchesSpec, findOperation, newWorkspace } from "@deskline/test-kit";
import type { Middleware } from "openapi-fetch";
import { inject } from "vitest";
import { Deskline, type DesklineOptions } from "../src/index.js";

export const specCheck: Middleware = {
  async onResponse({ request, response }) {
    const operation = findOperation(request.method, new URL(request.url).pathname);
    if (!operation) throw new Error(`${request.method} ${request.url} matches no spec operation`);
    const text = await response.clone().text();
    assertMatchesSpec(operation, response.status, text ? JSON.parse(text) : undefined);
    return undefined;
  },
};

/** A Deskline client whose responses are checked against the spec. */
export function checkedClient(options: Partial<DesklineOptions> & { apiKey: string }): Deskline {
  const deskline = new Deskline({ baseUrl: inject("baseUrl"), ...options });
  deskline.raw.use(specCheck);
  return deskline;
}

/** A fresh workspace with a key of the given scopes, and a checked client for it. */
export async function workspaceClient(scopes: string[] = ALL_SCOPES, options: Partial<DesklineOptions> = {}) {
  const { workspaceId, key } = await newWorkspace(scopes);
  return { workspaceId, key, deskline: checkedClient({ apiKey: key, ...options }) };
}
