import { atScopeEnd } from "./file-end.js";
import { type MainProcess, spawnMain } from "./server-process.js";

/**
 * The real server process (`src/main.ts`, or its build) as a child, for tests of what only a process shows:
 * start-up, signals, a SIGKILL. Whatever a test starts is killed after it (after the file, for
 * what its hooks start).
 */

export {
  BUILT,
  clockMovedBy,
  eventually,
  MAIN,
  MAIN_ENTRY,
  type MainProcess,
  SHIFTED,
} from "./server-process.js";

export function startMain(env: Record<string, string>, args?: string[], cwd?: string): MainProcess {
  const main = spawnMain(env, args, cwd);
  atScopeEnd(() => {
    const { child } = main;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return main;
}
