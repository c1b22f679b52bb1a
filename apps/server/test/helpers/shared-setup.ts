// One setup for several describe blocks of a file, when a block grew past a screen and was split
// by topic: each block registers it as its own `beforeAll`, the first to run does the work and
// the others wait on the same promise. The tests keep sharing what the setup made and what
// earlier tests wrote, and blocks of the file that never used it still do not run it.
import { beforeAll } from "vitest";

/** Returns a function that each describe block sharing `setup` calls once, in its body. */
export function sharedBeforeAll(setup: () => Promise<void>, timeout?: number): () => void {
  let done: Promise<void> | undefined;
  return () => {
    beforeAll(async () => {
      done ??= setup();
      await done;
    }, timeout);
  };
}
