import { join } from "node:path";
import type { EmbeddedDatabaseChoice } from "../config.js";
import type { Logger } from "../logger.js";
import { lockDataDir } from "./data-dir.js";
import { MongodUnavailable, startMongod } from "./embedded-mongod.js";
import { MONGO_JAVA_SERVER_VERSION, startMongoJavaServer } from "./mongo-java-server.js";

/** A database this process started; `stop()` ends it (and unlocks its data directory). */
export interface EmbeddedDatabase {
  uri: string;
  kind: "mongodb-memory-server" | "mongo-java-server";
  /** Where its data stays across restarts; undefined: in memory, gone after stop. */
  dataDir: string | undefined;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  /** Keep the data in this directory (locked while running); without it, in memory. */
  dataDir?: string;
}

/**
 * docs/design.md, Database: without MONGODB_URI: a real mongod through mongodb-memory-server where one is
 * cached or can be downloaded, else mongo-java-server (on a free loopback port). `choice`
 * (DESKLINE_EMBEDDED_DB) can pin either. With `dataDir` the data survives a restart (`pnpm start`):
 * mongod keeps it in `<dataDir>/mongod`, mongo-java-server in the H2 file
 * `<dataDir>/mongo-java-server/data.mv.db`; without it, both keep it in memory (tests, benches,
 * `--ephemeral`). One log line says which started, persistent where or in memory, and why.
 */
export async function startEmbeddedDatabase(
  logger: Logger,
  choice: EmbeddedDatabaseChoice = "auto",
  options: EmbeddedDatabaseOptions = {},
): Promise<EmbeddedDatabase> {
  // loadConfig refuses `off` without MONGODB_URI already; this keeps any other caller honest.
  if (choice === "off") throw new Error("DESKLINE_EMBEDDED_DB=off: no embedded database; set MONGODB_URI");
  const { dataDir } = options;
  // Taken before either engine starts: a second server on the same directory must stop here, not
  // fail inside mongod and fall back to the other engine's files.
  const lock = dataDir ? await lockDataDir(dataDir) : undefined;
  const where = (path: string | undefined) => (path ? `persistent in ${path}` : "in memory");
  const withLock = (stop: () => Promise<void>) => async () => {
    await stop();
    await lock?.release();
  };
  try {
    let reason = "DESKLINE_EMBEDDED_DB=mongo-java-server";
    if (choice !== "mongo-java-server") {
      try {
        const dbPath = dataDir && join(dataDir, "mongod");
        const mongod = await startMongod({ force: choice === "mongodb-memory-server", dbPath });
        logger.info(
          { uri: mongod.uri, dataDir },
          `embedded database: mongod via mongodb-memory-server (${where(dbPath)}), because MONGODB_URI is unset`,
        );
        return { uri: mongod.uri, kind: "mongodb-memory-server", dataDir, stop: withLock(mongod.stop) };
      } catch (error) {
        if (choice === "mongodb-memory-server") throw error;
        reason =
          error instanceof MongodUnavailable
            ? `no mongod could be downloaded: ${error.message}`
            : `mongod did not start: ${String((error as Error).message ?? error).slice(0, 200)}`;
      }
    }
    const file = dataDir && join(dataDir, "mongo-java-server", "data.mv.db");
    const server = await startMongoJavaServer({
      file,
      // The request it failed answers 500; its cause is only in the launcher's log.
      onInternalError: (trace) =>
        logger.error({ trace }, "embedded database: mongo-java-server failed a command"),
    });
    logger.info(
      { uri: server.uri, dataDir },
      `embedded database: mongo-java-server ${MONGO_JAVA_SERVER_VERSION} (${where(file)}), because ${reason}`,
    );
    return { uri: server.uri, kind: "mongo-java-server", dataDir, stop: withLock(server.stop) };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}
