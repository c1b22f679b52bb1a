import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { clockMovedBy, runToEnd } from "./helpers/server-process.js";

// Stored absolute times (the upgrade fixture's, a test's literal date) broke tests twice, each on
// the day the calendar passed them. The files that read stored or absolute times run again here,
// in a vitest whose processes (and the server processes they start) live 60 days from now
// (helpers/shifted-date.mjs); the database keeps the run's time, as a server's clock and its
// database's may differ. On the run's database, so no second one starts. 60 days from this run's
// time (clockMovedBy): under `pnpm test:later`, which already runs 60 days ahead, they run 120
// days ahead, still 60 from their database. How to run any file that way: docs/development.md,
// "Tests 60 days from now".

const SIXTY_DAYS_MS = 60 * 86_400_000;
const SERVER_DIR = join(import.meta.dirname, "..");
/**
 * Chosen for what they read (the upgrade fixture, stored keys' and answers' times) and for cost:
 * about half a minute together (the upgrade test most of it); the other files that write dates
 * passed this way too when tried (docs/development.md, "Tests 60 days from now").
 */
const FILES = [
  "test/shifted-clock.test.ts",
  "test/fixture-times.test.ts",
  "test/upgrade.test.ts",
  "test/idempotency.test.ts",
  "test/idempotency-keys.test.ts",
];

describe("60 days from now", () => {
  it("the files that read stored times still pass", { timeout: 180_000 }, async () => {
    const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
    // The outer run's own variables (VITEST, VITEST_POOL_ID…) would make the inner one a worker.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")),
    );
    const { code, output } = await runToEnd(
      process.execPath,
      [vitest, "run", "--config", "vitest.config.ts", ...FILES],
      {
        cwd: SERVER_DIR,
        env: {
          ...env,
          NODE_OPTIONS: `--import ${join(SERVER_DIR, "test/helpers/shifted-date.mjs")}`,
          ...clockMovedBy(SIXTY_DAYS_MS),
          MONGODB_URI: inject("mongodbUri"),
          // Plain text, so the summary line below reads without colour codes.
          NO_COLOR: "1",
          FORCE_COLOR: "0",
        },
      },
    );
    expect(code, output.slice(-6000)).toBe(0);
    expect(output).toMatch(new RegExp(`Test Files\\D+${FILES.length} passed`));
  });
});
