import type { EmbeddedDatabaseChoice } from "../config.js";
import type { Logger } from "../logger.js";
import { MongodUnavailable, startMongod } from "./embedded-mongod.js";
import { MONGO_JAVA_SERVER_VERSION, startMongoJavaServer } from "./mongo-java-server.js";

/** A database this process started; `stop()` ends it (its data lived only in it). */
export interface EmbeddedDatabase {
  uri: string;
  kind: "mongodb-memory-server" | "mongo-java-server";
  stop(): Promise<void>;
}

/**
 * DESIGN.md §2, without MONGODB_URI: a real mongod through mongodb-memory-server where one is
 * cached or can be downloaded, else mongo-java-server (in memory, on a free loopback port).
 * `choice` (DESKLINE_EMBEDDED_DB) can pin either. One log line says which started, and why.
 */
export async function startEmbeddedDatabase(
  logger: Logger,
  choice: EmbeddedDatabaseChoice = "auto",
): Promise<EmbeddedDatabase> {
  let reason = "DESKLINE_EMBEDDED_DB=mongo-java-server";
  if (choice !== "mongo-java-server") {
    try {
      const mongod = await startMongod({ force: choice === "mongodb-memory-server" });
      logger.info(
        { uri: mongod.uri },
        "embedded database: mongod via mongodb-memory-server, because MONGODB_URI is unset",
      );
      return { ...mongod, kind: "mongodb-memory-server" };
    } catch (error) {
      if (choice === "mongodb-memory-server") throw error;
      reason =
        error instanceof MongodUnavailable
          ? `no mongod could be downloaded: ${error.message}`
          : `mongod did not start: ${String((error as Error).message ?? error).slice(0, 200)}`;
    }
  }
  const server = await startMongoJavaServer();
  logger.info(
    { uri: server.uri },
    `embedded database: mongo-java-server ${MONGO_JAVA_SERVER_VERSION} (in memory), because ${reason}`,
  );
  return { uri: server.uri, kind: "mongo-java-server", stop: server.stop };
}
