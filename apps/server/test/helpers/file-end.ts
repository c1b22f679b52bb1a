/**
 * What a test file started (servers, receivers, processes, database clients), stopped once its
 * tests are done. Not a module-level `afterAll` in each helper, for two reasons: test files share
 * each worker's modules (`isolate: false`, docs/development.md, "How it is built"), so such a hook
 * would run for the first file that imported the helper only; and the test kit loads some helpers
 * on first call, from inside a hook, where vitest silently never runs an `afterAll` registered.
 * The setup file `apps/server/test/setup/file-end.ts`, which every project using the helpers
 * loads before each file, runs the stops after the file's own hooks.
 */

type Stop = () => unknown;

const stops: Stop[] = [];
let installed = false;

/** Called by the setup file, once per test file. */
export function fileEndInstalled(): void {
  installed = true;
}

/**
 * Stops `stop`'s resource after the current file's tests. Outside a test file (a vitest global
 * setup, a benchmark under tsx) there is no file to end: whoever started the resource stops it.
 */
export function atFileEnd(stop: Stop): void {
  if (installed) {
    stops.push(stop);
  } else if (process.env.VITEST_WORKER_ID !== undefined) {
    throw new Error(
      "atFileEnd needs apps/server/test/setup/file-end.ts in the project's setupFiles (vitest.config.ts)",
    );
  }
}

/** Runs every stop registered during the file, at once; one that fails does not keep the others. */
export async function runFileEnd(): Promise<void> {
  const due = stops.splice(0);
  const results = await Promise.allSettled(due.map(async (stop) => stop()));
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
