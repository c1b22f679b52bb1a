import { describe, expect, it } from "vitest";

// The clock a test file reads is the one DESKLINE_TEST_DATE_OFFSET_MS sets (helpers/shifted-date.mjs;
// 0 when unset): the server-later project (vitest.later.config.ts) counts on it to run its files
// 60 days from now, and a preload that silently did not load, or an offset that was not set,
// would let them pass on today's date.
describe("the test clock", () => {
  it("is the real one moved by DESKLINE_TEST_DATE_OFFSET_MS", ({ task }) => {
    const offset = Number(process.env.DESKLINE_TEST_DATE_OFFSET_MS ?? 0);
    if (task.file.projectName === "server-later") expect(offset).toBeGreaterThanOrEqual(60 * 86_400_000);
    // performance.timeOrigin + performance.now() is the real wall clock; the preload leaves it be.
    const real = performance.timeOrigin + performance.now();
    expect(Math.abs(Date.now() - real - offset)).toBeLessThan(1_000);
    expect(Math.abs(Date.parse(new Date().toISOString()) - real - offset)).toBeLessThan(1_000);
  });
});
