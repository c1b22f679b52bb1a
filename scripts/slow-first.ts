// The order vitest starts test files in (`sequence.sequencer`, the root config's and the server's):
// vitest's own, except that the files that take longest start first, whatever their project.
// Vitest orders by the durations of the run before, kept under node_modules/.vite; without them (a
// clean clone, as CI and a newcomer have) it goes project by project, each by file size, and
// Schemathesis, a small file that runs for over a minute, started three quarters into a CI run
// and ended it alone (docs/development.md, "How it is built": the longest files first).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Started first, in this order (paths from the repository's root): long, and busy computing rather
 * than timing anything, so a loaded start does them no harm. Not the fault suite: it times
 * hand-offs, and the server project reaches it early enough (it is that project's largest file).
 */
const LONGEST = ["test/e2e/readme-examples.test.ts", "apps/server/test/schemathesis.test.ts"].map((file) =>
  join(import.meta.dirname, "..", file),
);
// A rename would otherwise drop the file back to where vitest puts it, unnoticed.
for (const file of LONGEST)
  if (!existsSync(file)) throw new Error(`slow-first.ts names no test file: ${file}`);

const rank = (spec: TestSpecification) => {
  const index = LONGEST.indexOf(spec.moduleId);
  return index === -1 ? LONGEST.length : index;
};

export class SlowFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    // Array sort is stable: the files not listed keep vitest's order among themselves.
    return (await super.sort(specs)).sort((a, b) => rank(a) - rank(b));
  }
}
