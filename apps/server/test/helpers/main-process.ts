import type { ChildProcess } from "node:child_process";
import { atFileEnd } from "./file-end.js";
import { type MainProcess, spawnMain } from "./server-process.js";

/**
 * The real server process (`src/main.ts`, or its build) as a child, for tests of what only a process shows:
 * start-up, signals, a SIGKILL. Whatever a test file starts is killed after its tests.
 */

export { BUILT, eventually, FROM_SOURCE, type MainProcess } from "./server-process.js";

const started: ChildProcess[] = [];
atFileEnd(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

export function startMain(env: Record<string, string>, args?: string[], cwd?: string): MainProcess {
  const main = spawnMain(env, args, cwd);
  started.push(main.child);
  return main;
}
