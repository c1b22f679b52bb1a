import type { TestProject } from "vitest/node";
import { startTestServer } from "./helpers/server.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    mongodbUri: string;
    /** The run's database, for tests that must put documents no API creates yet. */
    databaseName: string;
  }
}

/** Starts the embedded database (or uses MONGODB_URI) and one real server for every test file. */
export default async function setup(project: TestProject) {
  const server = await startTestServer();
  project.provide("baseUrl", server.baseUrl);
  project.provide("adminToken", server.adminToken);
  project.provide("mongodbUri", server.mongodbUri);
  project.provide("databaseName", server.databaseName);
  return () => server.stop();
}
