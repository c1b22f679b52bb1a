// The built server (`apps/server/dist/main.js`) as a child process, started once by the end-to-end
// project's globalSetup exactly as an operator runs it: plain node, settings from the environment,
// its own embedded database (a child of it, in memory, which dies with it).
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../apps/server/dist/main.js", import.meta.url));
/** How much of the server's log to keep for a failure message. */
const LOG_TAIL = 32_000;

export interface ServerProcess {
  baseUrl: string;
  /** The last part of what it logged, for failure messages. */
  log(): string;
  /** SIGTERM (a graceful stop), then SIGKILL if it lingers. */
  stop(): Promise<void>;
  /** The exit code, or the signal that ended it; undefined while it runs. */
  exitCode(): number | string | undefined;
  /** Sends `signal` and resolves with the exit code once it has exited (null: killed by it). */
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

export async function startBuiltServer(
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<ServerProcess> {
  // --ephemeral: its embedded database in memory, never in the checkout's .deskline/data.
  const child: ChildProcess = spawn(process.execPath, [MAIN, "--ephemeral"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`the server did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${error.message}\n${log}`));
    }
    const onOutput = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-LOG_TAIL);
      const listening = /"baseUrl":"([^"]+)"/.exec(log);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1] as string);
      }
    };
    child.stdout?.on("data", onOutput);
    child.stderr?.on("data", onOutput);
    void exited.then(() => fail(new Error(`the server exited with ${child.exitCode ?? child.signalCode}`)));
  });
  await untilReady(baseUrl, timeoutMs);
  return {
    baseUrl,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(force);
    },
    exitCode: () => child.exitCode ?? child.signalCode ?? undefined,
    async kill(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** Waits for `/readyz` 200: the server answers 503 until its migrations and indexes are done. */
async function untilReady(baseUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${baseUrl}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${baseUrl}/readyz answered ${status} for ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
