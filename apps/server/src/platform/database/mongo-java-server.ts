import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { AGAIN, giveUpAfter, retry } from "../backoff.js";

/**
 * The embedded database's fallback (docs/design.md, Database): mongo-java-server, a MongoDB wire-protocol
 * server whose single-document operations are atomic, in memory or persistent in one H2 file.
 * Its jars come from Maven Central through scripts/install-mongo-java-server.sh; a small launcher
 * there starts it.
 */

export const MONGO_JAVA_SERVER_VERSION = "1.47";

const INSTALL_SCRIPT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../../../scripts/install-mongo-java-server.sh",
);
// A cold JVM on a busy machine takes a few seconds; the launcher normally answers in ~0.3 s.
const START_TIMEOUT_MS = 30_000;
// How long a start waits for another launcher to let go of the H2 file (see startMongoJavaServer).
const FILE_LOCKED_WAIT_MS = 15_000;
// Closing the H2 file writes what the last background commit left; give it time before SIGKILL.
const STOP_TIMEOUT_MS = 15_000;

export interface JavaMongoServer {
  uri: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Where the jars and the compiled launcher are. The script is idempotent: after the first
 * install it only prints the directory (a few milliseconds).
 */
async function installDir(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)("bash", [INSTALL_SCRIPT], { maxBuffer: 1 << 20 });
    const dir = stdout.trim().split("\n").at(-1);
    if (!dir) throw new Error("the install script printed no directory");
    return dir;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not install mongo-java-server: ${stderr || (error as Error).message}`);
  }
}

export interface MongoJavaServerOptions {
  /** 0 or absent: a free one. */
  port?: number;
  /** The H2 file to open or create; absent: in memory. */
  file?: string;
  /**
   * Turns on its oplog, which gives it change streams. For tests of the change-stream path only:
   * that oplog grows without bound and every getMore of a stream scans it.
   */
  oplog?: boolean;
  /**
   * Told of each command the library failed with an exception of its own (its log's
   * `Unknown error!` and the stack trace after it), which the client sees only as
   * "Unknown error: <message>": a fallback bug, whose trace says where.
   */
  onInternalError?: (trace: string) => void;
}

/**
 * Starts mongo-java-server on 127.0.0.1 (`port` 0: a free one): with `file`, on the H2 file there
 * (created if missing, with what it held before otherwise); without, empty and in memory.
 */
export async function startMongoJavaServer(options: MongoJavaServerOptions = {}): Promise<JavaMongoServer> {
  const dir = await installDir();
  if (!options.file) return launch(dir, options);
  await mkdir(dirname(options.file), { recursive: true });
  // The launcher of a server that was just killed may still be closing the file (H2 locks it
  // until then): wait for it rather than fail the start.
  let locked: Error | undefined;
  const launched = await retry(
    { firstMs: 250 },
    async () => {
      try {
        return await launch(dir, options);
      } catch (error) {
        if (!/The file is locked/.test((error as Error).message)) throw error;
        locked = error as Error;
        return AGAIN;
      }
    },
    { giveUp: giveUpAfter(FILE_LOCKED_WAIT_MS, () => locked as Error) },
  );
  return launched as JavaMongoServer;
}

/**
 * The database keeps the clock of the process that starts it, as a host's own mongod would: where
 * this process's `Date` was moved (a test running on a later date), by as much. The monotonic
 * `performance` clock, which no `Date` change moves, gives the host's real time.
 */
function clockOffset(): string[] {
  const offset = Math.round(Date.now() - (performance.timeOrigin + performance.now()));
  return Math.abs(offset) > 1_000 ? [`-Ddeskline.clockOffsetMs=${offset}`] : [];
}

async function launch(dir: string, options: MongoJavaServerOptions): Promise<JavaMongoServer> {
  const child = spawn(
    "java",
    [
      // The client compiler only: C2's optimising compiles cost more CPU than they save on a
      // laptop's or a test run's database. Measured on five of the server's DB-heavy test files
      // (one run each way, twice): 45 s of CPU with the default, 33-35 s with this.
      "-XX:TieredStopAtLevel=1",
      // Its own log is not ours: only warnings, and only kept for a failure's message.
      "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
      ...(options.oplog ? ["-Ddeskline.oplog=true"] : []),
      ...clockOffset(),
      "-cp",
      [join(dir, "lib", "*"), join(dir, "classes")].join(":"),
      "Launcher",
      String(options.port ?? 0),
      ...(options.file ? [options.file] : []),
    ],
    // stdin stays open: the launcher exits when it closes, so it dies with this process.
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  const traces = options.onInternalError && internalErrors(options.onInternalError);
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    stderr = (stderr + text).slice(-2000);
    traces?.(text);
  });
  const port = await listeningPort(child, () => stderr);
  // Nothing else is read from stdout; draining it keeps a chatty JVM from blocking.
  child.stdout?.resume();
  return { uri: `mongodb://127.0.0.1:${port}/`, port, stop: () => stopChild(child) };
}

/**
 * Reads the launcher's log for the library's `Unknown error!` entries: each is that line, then
 * the exception and its stack, up to the next entry (a line opening with its thread, `[…]`) or
 * a quiet 100 ms. `apps/server/test/embedded.test.ts` provokes one.
 */
function internalErrors(report: (trace: string) => void): (chunk: string) => void {
  let partial = "";
  let trace: string[] | undefined;
  let quiet: NodeJS.Timeout | undefined;
  const flush = () => {
    if (trace) report(trace.join("\n"));
    trace = undefined;
  };
  return (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith("[")) flush();
      // The change-stream probe a worker makes at start (webhooks/delivery/wake.ts) fails so on
      // purpose where the oplog is off: its answer is how the server learns there is none.
      if (trace && line.includes("commandChangeStreamPipeline")) trace = undefined;
      if (line.includes("Unknown error!")) trace = [];
      trace?.push(line);
    }
    clearTimeout(quiet);
    if (trace) quiet = setTimeout(flush, 100).unref();
  };
}

/** Waits for the launcher's `listening <port>` line. */
function listeningPort(child: ChildProcess, stderr: () => string): Promise<number> {
  return new Promise((done, fail) => {
    let stdout = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`mongo-java-server did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr()}`));
    }, START_TIMEOUT_MS);
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.stdout?.removeAllListeners("data");
      child.removeAllListeners("exit");
      child.removeAllListeners("error");
      outcome();
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^listening (\d+)$/m.exec(stdout);
      if (match) settle(() => done(Number(match[1])));
    });
    child.once("error", (error: NodeJS.ErrnoException) =>
      settle(() =>
        fail(
          error.code === "ENOENT"
            ? new Error("`java` is not on the PATH; mongo-java-server needs a JDK 17+")
            : error,
        ),
      ),
    );
    child.once("exit", (code) =>
      settle(() => fail(new Error(`mongo-java-server exited with ${code}: ${stderr().trim()}`))),
    );
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(force);
      done();
    });
    child.stdin?.end();
  });
}
