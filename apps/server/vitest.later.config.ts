import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import server from "./vitest.config.js";

// The server's files that read stored or absolute times, run again with the processes' clock 60
// days ahead: stored absolute times (the upgrade fixture's, a test's literal date) broke tests
// twice, each on the day the calendar passed them. The preload helpers/shifted-date.mjs moves the
// workers' `Date`, and NODE_OPTIONS carries it to every process they start; the database keeps the
// run's time, as a server's clock and its database's may differ. 60 days from the run's own offset:
// under `pnpm test:later`, which already runs 60 days ahead, these run 120 days ahead, still 60
// from their database (docs/development.md, "Tests 60 days from now").

const SIXTY_DAYS_MS = 60 * 86_400_000;
const preload = join(import.meta.dirname, "test/helpers/shifted-date.mjs");

/**
 * Chosen for what they read (the upgrade fixture, stored keys' and answers' times) and for cost;
 * the other files that write dates passed this way too when tried (docs/development.md, "Tests 60
 * days from now"). A file renamed away would silently drop out of `include`, so each must exist.
 */
const FILES = [
  "test/shifted-clock.test.ts",
  "test/fixture-times.test.ts",
  "test/upgrade.test.ts",
  "test/idempotency.test.ts",
  "test/idempotency-keys.test.ts",
];
for (const file of FILES) {
  if (!existsSync(join(import.meta.dirname, file)))
    throw new Error(`vitest.later.config.ts: ${file} is gone`);
}

// The server project's settings (its database, setup file, timeouts), on these files and this clock.
export default defineConfig({
  test: {
    ...server.test,
    name: "server-later",
    include: FILES,
    execArgv: ["--import", preload],
    env: {
      DESKLINE_TEST_DATE_OFFSET_MS: String(
        Number(process.env.DESKLINE_TEST_DATE_OFFSET_MS ?? 0) + SIXTY_DAYS_MS,
      ),
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${preload}`].filter(Boolean).join(" "),
    },
  },
});
