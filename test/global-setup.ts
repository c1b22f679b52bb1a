// One built server for the whole end-to-end project (its start is the slow part), trusting the
// self-signed certificate the test files' HTTPS receivers use, with millisecond retry delays.
import { randomBytes } from "node:crypto";
import { TEST_DELIVERY_ENV, testCertificate } from "@deskline/test-kit";
import type { TestProject } from "vitest/node";
import { startBuiltServer } from "./helpers/server-process.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    /** The receivers' certificate and key (PEM files), which the server trusts. */
    certFile: string;
    keyFile: string;
  }
}

export default async function setup(project: TestProject) {
  const certificate = testCertificate();
  const adminToken = `e2e-${randomBytes(12).toString("hex")}`;
  const server = await startBuiltServer({
    ADMIN_TOKEN: adminToken,
    NODE_EXTRA_CA_CERTS: certificate.certFile,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_DELAYS: TEST_DELIVERY_ENV.WEBHOOK_RETRY_DELAYS,
    // This server lives until the whole run ends, though the project's files are done in its
    // first third: at the 50 ms polls and 100 ms sweeps it had, idling cost it and its database
    // 82 CPU-seconds of a CI run (docs/development.md, "How it is built").
    WEBHOOK_POLL_INTERVAL_MS: TEST_DELIVERY_ENV.WEBHOOK_POLL_INTERVAL_MS,
    EVENT_RELAY_INTERVAL_MS: TEST_DELIVERY_ENV.EVENT_RELAY_INTERVAL_MS,
  });
  project.provide("baseUrl", server.baseUrl);
  project.provide("adminToken", adminToken);
  project.provide("certFile", certificate.certFile);
  project.provide("keyFile", certificate.keyFile);
  return () => server.stop();
}
