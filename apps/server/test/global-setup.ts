import type { TestProject } from "vitest/node";
import { startTestServer, type TestServer } from "./helpers/server.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    mongodbUri: string;
    /** The run's database, for tests that must put documents no API creates yet. */
    databaseName: string;
  }
}

/**
 * The server, SDK and CLI projects each name this setup, and vitest runs every project's setup in
 * its one main process: the first starts the server and the others share it, so a run starts one
 * database rather than three. Kept on `globalThis`, since each project loads its own copy of this
 * module; the last project's teardown stops it.
 */
interface Shared {
  server: Promise<TestServer>;
  projects: number;
}
const holder = globalThis as { desklineTestServer?: Shared };

/** Starts the embedded database (or uses MONGODB_URI) and one real server for every test file. */
export default async function setup(project: TestProject) {
  holder.desklineTestServer ??= { server: startTestServer(), projects: 0 };
  const shared = holder.desklineTestServer;
  shared.projects += 1;
  const server = await shared.server;
  project.provide("baseUrl", server.baseUrl);
  project.provide("adminToken", server.adminToken);
  project.provide("mongodbUri", server.mongodbUri);
  project.provide("databaseName", server.databaseName);
  return async () => {
    shared.projects -= 1;
    if (shared.projects > 0) return;
    holder.desklineTestServer = undefined;
    await server.stop();
  };
}
