/**
 * What a test file started (servers, receivers, processes, database clients), stopped once its
 * tests are done, and what one test started (a server it runs), once that test is done. Not a
 * module-level `afterAll` in each helper, for two reasons: test files share
 * each worker's modules (`isolate: false`, docs/development.md, "How it is built"), so such a hook
 * would run for the first file that imported the helper only; and the test kit loads some helpers
 * on first call, from inside a hook, where vitest silently never runs an `afterAll` registered.
 * The setup file `apps/server/test/setup/file-end.ts`, which every project using the helpers
 * loads before each file, runs the stops after the file's own hooks.
 */

import { AsyncLocalStorage } from "node:async_hooks";

type Stop = () => unknown;

const stops: Stop[] = [];
let installed = false;
/** The stops of the test running in this async context (each of a file's concurrent tests has its own). */
const testStops = new AsyncLocalStorage<Stop[]>();

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

/**
 * Where what is started now stops: at the end of the test running now, or, outside a test (a
 * `beforeAll`, a helper's own start-up), at the file's end. A server polls its database while it
 * idles, so one that a test started and left running until the file ends costs every later test
 * of the file (docs/development.md, "How it is built").
 */
export function scopeEnd(): (stop: Stop) => void {
  const test = testStops.getStore();
  return test ? (stop) => test.push(stop) : atFileEnd;
}

/** Stops `stop`'s resource at the end of the test that starts it, or of the file outside a test. */
export function atScopeEnd(stop: Stop): void {
  scopeEnd()(stop);
}

/** Runs `test` (the setup file's `aroundEach`), then stops what it started. */
export async function runTest(test: () => Promise<void>): Promise<void> {
  const started: Stop[] = [];
  try {
    await testStops.run(started, test);
  } finally {
    await stopAll(started);
  }
}

/** Runs every stop registered during the file, at once; one that fails does not keep the others. */
export function runFileEnd(): Promise<void> {
  return stopAll(stops.splice(0));
}

async function stopAll(due: Stop[]): Promise<void> {
  const results = await Promise.allSettled(due.map(async (stop) => stop()));
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
