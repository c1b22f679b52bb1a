// @deskline/test-kit: the one entry through which the tests outside the server (the SDK's, the
// CLI's, the verifier's, the end-to-end project's) reach the shared test harness (README.md
// beside this file lists every export). Importing it stays cheap: what it evaluates is the
// tests' own reading of the spec and small helpers, and of the server's source only the four
// leaf modules they use (the key scopes, ids, token hashing, the retry helper). What needs the
// server (a server in this process, a delivering deployment, the server's global setup) is
// loaded by a dynamic import the first time it is called; its types come from type-only imports.
import type { TestProject } from "vitest/node";
import type * as Delivery from "../../apps/server/test/helpers/delivery.js";
import type * as Server from "../../apps/server/test/helpers/server.js";

export {
  ALL_SCOPES,
  admin,
  api,
  assertMatchesSpec,
  newWorkspace,
} from "../../apps/server/test/helpers/api.js";
export { sendJson } from "../../apps/server/test/helpers/bearer-json.js";
export { findOperation, specOperations, specScopes } from "../../apps/server/test/helpers/contract.js";
export { TEST_DELIVERY_ENV } from "../../apps/server/test/helpers/delivery-env.js";
export { type Receiver, startReceiver } from "../../apps/server/test/helpers/https-receiver.js";
export { walkPages } from "../../apps/server/test/helpers/paging.js";
export type { TestServer } from "../../apps/server/test/helpers/server.js";
export { eventually } from "../../apps/server/test/helpers/server-process.js";
export { testCertificate } from "../../apps/server/test/helpers/test-certificate.js";
export { builtPackage, itLoadsAs, runAsync } from "./built-package.js";
export { type SpecProxy, startSpecProxy } from "./spec-proxy.js";

/** A real server on a real database in this process (the server's `startTestServer`). */
export async function startTestServer(
  ...args: Parameters<typeof Server.startTestServer>
): Promise<Server.TestServer> {
  const server = await import("../../apps/server/test/helpers/server.js");
  return server.startTestServer(...args);
}

/** The base URL of a delivering server that sends one attempt at a time (the server's `startOneAtATime`). */
export async function startOneAtATime(): ReturnType<typeof Delivery.startOneAtATime> {
  const delivery = await import("../../apps/server/test/helpers/delivery.js");
  return delivery.startOneAtATime();
}

/**
 * The server's own vitest global setup: the embedded database and one server for every file of
 * the run, provided as `baseUrl`, `adminToken`, `mongodbUri` and `databaseName`.
 */
export async function serverGlobalSetup(project: TestProject): Promise<() => Promise<void>> {
  const setup = await import("../../apps/server/test/global-setup.js");
  return setup.default(project);
}
