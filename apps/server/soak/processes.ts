import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { BUILT, FROM_SOURCE, type MainProcess, spawnMain } from "../test/helpers/server-process.js";

/**
 * Server processes for the crash trials: one slot per process (a ROLE and an environment), which
 * starts it, SIGKILLs it and starts it again on the same port, so the writer keeps one base URL.
 * A process that dies without being killed is restarted too, and counted: that is a finding.
 */

export type Role = "api" | "worker" | "all";

export interface ServerSlot {
  role: Role;
  /** `http://127.0.0.1:<port>` (fixed for the slot's life); empty for a worker. */
  baseUrl: string;
  /** Starts the process and waits until it serves (api, all) or delivers (worker, all). */
  start(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), then waits for the exit; used only to end a phase. */
  stop(): Promise<void>;
  /** Exits nobody asked for (the process crashed or gave up). */
  unexpectedExits: () => number;
  /** The last lines the process wrote, for a failure's message. */
  outputTail: () => string;
}

/** The build when there is one (starts in a fraction of tsx's time), else the sources. */
export function serverArgs(): string[] {
  return existsSync(join(import.meta.dirname, "../dist/main.js")) ? BUILT : FROM_SOURCE;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? done(address.port) : fail(new Error("no port")),
      );
    });
  });
}

/** A slot for `role`; `port` shares one API port between slots that never run at once. */
export async function createSlot(
  role: Role,
  env: Record<string, string>,
  port?: number,
): Promise<ServerSlot> {
  port ??= role === "worker" ? 0 : await freePort();
  let current: MainProcess | undefined;
  let expectingExit = false;
  let unexpectedExits = 0;
  let lastOutput = "";
  const args = serverArgs();

  const slot: ServerSlot = {
    role,
    baseUrl: role === "worker" ? "" : `http://127.0.0.1:${port}`,
    async start() {
      expectingExit = false;
      const main = spawnMain({ ...env, ROLE: role, PORT: String(port), LOG_LEVEL: "info" }, args);
      current = main;
      void main.exited.then(() => {
        lastOutput = main.output();
        if (expectingExit || current !== main) return;
        unexpectedExits++;
        // Keep the deployment whole: a supervisor would restart it too.
        void slot.start().catch(() => {});
      });
      // Ready: serving HTTP (api, all) and running the delivery loop (worker, all).
      if (role !== "worker") await main.ready();
      if (role !== "api") await main.logged(/delivering webhooks/);
    },
    async kill() {
      const main = current;
      if (!main) return;
      expectingExit = true;
      main.child.kill("SIGKILL");
      await main.exited;
    },
    async stop() {
      const main = current;
      if (!main) return;
      expectingExit = true;
      main.child.kill("SIGTERM");
      await main.exited;
    },
    unexpectedExits: () => unexpectedExits,
    outputTail: () => (current?.output() ?? lastOutput).slice(-3000),
  };
  return slot;
}
