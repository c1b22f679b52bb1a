import { afterAll } from "vitest";

/**
 * What the helpers stop when a test file ends: the servers, receivers, child processes and
 * database clients it started. A helper module registers its cleanup here once, when it loads,
 * instead of calling `afterAll` at its top level, because a module may load late: the test kit
 * (`@deskline/test-kit`) loads the in-process server and the delivery deployment from inside
 * the hook that first starts one, and vitest silently never runs an `afterAll` registered from
 * inside a hook. This module's one `afterAll` is registered when a test file first imports a
 * helper, so it runs whenever the rest loaded; it runs the cleanups last registered first, as
 * vitest runs its own hooks. Outside a test file (a vitest global setup, a benchmark under tsx)
 * there is no file to end and no hook to register: `afterAll` would throw there.
 */
const cleanups: Array<() => unknown> = [];

if (process.env.VITEST_WORKER_ID !== undefined) {
  afterAll(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, "cleanups at the file's end failed");
  });
}

/** Runs `cleanup` when the test file ends, after the file's own `afterAll` hooks. */
export function atFileEnd(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}
