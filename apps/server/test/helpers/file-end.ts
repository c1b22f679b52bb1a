/**
 * What a test file started (servers, receivers, processes, clients), stopped once its tests are
 * done. Test files share one module graph per worker (`isolate: false`, docs/development.md,
 * "How it is built"), so a helper's own module-level `afterAll` would run for the first file
 * that imported it only; `test/setup/file-end.ts`, a setup file every project loads, runs the
 * stops after each file instead.
 */

type Stop = () => unknown;

const stops: Stop[] = [];
let installed = false;

/** Called by the setup file, once per test file. */
export function fileEndInstalled(): void {
  installed = true;
}

/** Stops `stop`'s resource after the current file's tests (its own `afterAll` hooks run first). */
export function atFileEnd(stop: Stop): void {
  if (!installed) {
    throw new Error(
      "atFileEnd needs apps/server/test/setup/file-end.ts in the project's setupFiles (vitest.config.ts)",
    );
  }
  stops.push(stop);
}

/** Runs every stop registered during the file, at once; one that fails does not keep the others. */
export async function runFileEnd(): Promise<void> {
  const due = stops.splice(0);
  const results = await Promise.allSettled(due.map(async (stop) => stop()));
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
