// A database for tests that run several server processes on one (the fleet): MONGODB_URI when
// set, else an embedded one of the test's own (mongod, or mongo-java-server where none can be
// had), under a database name no other test uses.
import { randomBytes } from "node:crypto";
import { loadConfig } from "../../apps/server/src/config.js";
import { startEmbeddedDatabase } from "../../apps/server/src/platform/database/embedded.js";
import { createLogger } from "../../apps/server/src/platform/logger.js";

export interface FleetDatabase {
  uri: string;
  name: string;
  stop(): Promise<void>;
}

export async function startFleetDatabase(): Promise<FleetDatabase> {
  const name = `deskline_fleet_${randomBytes(6).toString("hex")}`;
  const { mongodbUri, embeddedDatabase } = loadConfig();
  if (mongodbUri) return { uri: mongodbUri, name, stop: async () => {} };
  const embedded = await startEmbeddedDatabase(createLogger("warn"), embeddedDatabase);
  return { uri: embedded.uri, name, stop: () => embedded.stop() };
}
