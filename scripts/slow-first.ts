// The order vitest starts test files in (`sequence.sequencer`, the root config's and the server's):
// vitest's own, except that in its project a file known to take longest starts first. Vitest
// orders by the durations of the run before, kept under node_modules/.vite; without them (a clean
// clone, as CI and a newcomer have) it takes each project's files by size, and Schemathesis, a
// small file that runs for over a minute, started three quarters into a CI run and ended it alone
// (docs/development.md, "How it is built": the longest files first).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Started first in their projects (paths from the repository's root): long, and busy computing
 * rather than timing anything. Not the fault suite: it is its project's largest file, so vitest
 * starts it early anyway.
 */
const LONGEST = ["apps/server/test/schemathesis.test.ts"].map((file) =>
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
    // Vitest's order goes project by project; each keeps its place, its listed files first (a
    // listed file at once in a run of every project started before the type check ended and
    // beside the longest end-to-end file, and took half again as long). Array sort is stable.
    const sorted = await super.sort(specs);
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    return projects.flatMap((project) =>
      sorted.filter((spec) => spec.project.name === project).sort((a, b) => rank(a) - rank(b)),
    );
  }
}
