import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order `pnpm test` starts its files in: the slowest first, whatever their project, then the
 * rest as vitest orders them (docs/development.md, "How it is built": the slowest files first).
 *
 * Vitest runs the projects one after another, each project's larger files first, or its longer
 * ones once it has timed them; a clean clone (CI) has no timings. The server project then came
 * last, and its files that mostly wait (on a process's restart, a lease, an outage) ran two at a
 * time at the end, with a third of both cores idle for two minutes. Started first, each of them
 * runs beside a file that computes; the many short files come last and leave no long tail.
 */
export const SLOWEST = [
  "apps/server/test/delivery-faults.test.ts",
  "apps/server/test/schemathesis.test.ts",
  "test/e2e/readme-examples.test.ts",
  "apps/server/test/console-browser.test.ts",
  "test/e2e/fresh-clone.test.ts",
  "apps/server/test/rate-limit-shared.test.ts",
  "apps/server/test/persistence.test.ts",
  "test/e2e/openapi-generator.test.ts",
  "apps/server/test/webhook-recovery.test.ts",
  "apps/server/test/resilience.test.ts",
  "apps/server/test/sixty-days.test.ts",
  "apps/server/test/soak.test.ts",
  "apps/server/test/secrets-at-rest.test.ts",
  "apps/cli/test/listen.test.ts",
  "test/e2e/generated-clients.test.ts",
  "test/e2e/packages-publish.test.ts",
  "apps/server/test/webhook-delivery.test.ts",
  "test/e2e/fleet.test.ts",
  "apps/server/test/delivery-wake-heals.test.ts",
  "apps/server/test/log-format.test.ts",
  "apps/server/test/telemetry.test.ts",
  "apps/server/test/built-server.test.ts",
];

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const at = SLOWEST.indexOf(spec.moduleId.slice(root.length + 1));
      return at === -1 ? SLOWEST.length : at;
    };
    // Array#sort is stable: the files not listed keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
