import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MongoClient } from "mongodb";
import type { Logger } from "../logger.js";

/** A database this process started; `stop()` ends it and removes its files. */
export interface EmbeddedDatabase {
  uri: string;
  kind: "mongodb-memory-server" | "ferretdb";
  stop(): Promise<void>;
}

const INSTALL_SCRIPT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../../scripts/install-ferretdb.sh",
);

/**
 * DESIGN.md §2: a real mongod through mongodb-memory-server when it can be had (downloaded once
 * and cached), else FerretDB on SQLite, built from the Go module proxy when missing. Says which
 * one started, and why, in one log line.
 */
export async function startEmbeddedDatabase(logger: Logger): Promise<EmbeddedDatabase> {
  let reason: string;
  if (process.env.DESKLINE_EMBEDDED_DB === "ferretdb") {
    reason = "DESKLINE_EMBEDDED_DB=ferretdb";
  } else {
    try {
      const db = await startMongoMemoryServer();
      logger.info(
        { uri: db.uri },
        "embedded database: mongod via mongodb-memory-server (MONGODB_URI is unset)",
      );
      return db;
    } catch (error) {
      reason = `mongodb-memory-server could not start mongod: ${oneLine(error)}`;
    }
  }
  const db = await startFerretDb(logger);
  logger.info({ uri: db.uri }, `embedded database: FerretDB 1.24 on SQLite, because ${reason}`);
  return db;
}

async function startMongoMemoryServer(): Promise<EmbeddedDatabase> {
  // Imported lazily: deployments with MONGODB_URI never load it.
  const { MongoMemoryServer } = await import("mongodb-memory-server-core");
  // On failure the library prints the whole download error with its stack to the console; our
  // one log line already says why, so its console output is held back while it starts.
  const warn = console.warn;
  console.warn = () => {};
  let server: InstanceType<typeof MongoMemoryServer>;
  try {
    server = await MongoMemoryServer.create();
  } finally {
    console.warn = warn;
  }
  return {
    uri: server.getUri(),
    kind: "mongodb-memory-server",
    stop: async () => {
      await server.stop({ doCleanup: true, force: true });
    },
  };
}

async function findOrInstallFerretDb(logger: Logger): Promise<string> {
  const gopathBin = await goBinDir();
  const candidates = [
    process.env.FERRETDB_BIN,
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "ferretdb")),
    gopathBin && join(gopathBin, "ferretdb"),
  ].filter((path): path is string => Boolean(path));
  const found = candidates.find((path) => existsSync(path));
  if (found) return found;
  logger.info("FerretDB is not installed; building it with Go (about two minutes, once)");
  const { stdout } = await promisify(execFile)("bash", [INSTALL_SCRIPT], { maxBuffer: 1 << 20 });
  return stdout.trim().split("\n").at(-1) ?? "ferretdb";
}

async function goBinDir(): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)("go", ["env", "GOPATH"]);
    return join(stdout.trim(), "bin");
  } catch {
    return undefined;
  }
}

/** Starts FerretDB on a free loopback port with its SQLite files in a fresh temp dir. */
export async function startFerretDb(logger: Logger, options: { port?: number; stateDir?: string } = {}) {
  const binary = await findOrInstallFerretDb(logger);
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), "deskline-ferretdb-")));
  const port = options.port ?? (await freePort());
  const child = spawn(
    binary,
    [
      "--handler=sqlite",
      `--sqlite-url=file:${stateDir}/`,
      `--state-dir=${stateDir}`,
      `--listen-addr=127.0.0.1:${port}`,
      "--debug-addr=-",
      "--telemetry=disable",
      "--log-level=error",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const uri = `mongodb://127.0.0.1:${port}/`;
  await waitUntilReachable(uri, child, () => stderr);
  const ownsStateDir = options.stateDir === undefined;
  return {
    uri,
    kind: "ferretdb" as const,
    port,
    stateDir,
    process: child,
    stop: async () => {
      await stopChild(child);
      if (ownsStateDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReachable(uri: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`FerretDB exited with ${child.exitCode}: ${stderr()}`);
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 500 });
    try {
      await client.db("admin").command({ ping: 1 });
      return;
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    } finally {
      await client.close();
    }
  }
  child.kill("SIGKILL");
  throw new Error(`FerretDB did not answer within 30 s: ${stderr()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(force);
      done();
    });
    child.kill("SIGTERM");
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** An error as one short line: download errors span several lines with their details last. */
function oneLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error)
    .replace(/\s+/g, " ")
    .slice(0, 300);
}
