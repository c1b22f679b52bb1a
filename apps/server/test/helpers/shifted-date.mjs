/**
 * A preload that moves this process's wall clock by DESKLINE_TEST_DATE_OFFSET_MS (negative: back):
 * `Date.now()` and `new Date()` read the shifted time, the monotonic clock (`performance.now()`)
 * stays. It is how the tests run a process as a host whose clock drifted (a worker a minute
 * ahead), or the whole suite on a day 60 days from now:
 *
 *   node --import ./test/helpers/shifted-date.mjs …            (with the variable set)
 *
 * Plain JavaScript, so that `node --import` loads it before tsx or vitest.
 */
const offset = Number(process.env.DESKLINE_TEST_DATE_OFFSET_MS ?? 0);
if (!Number.isSafeInteger(offset)) {
  throw new Error(`DESKLINE_TEST_DATE_OFFSET_MS must be an integer of milliseconds, got ${offset}`);
}

if (offset !== 0) {
  const RealDate = globalThis.Date;
  const realNow = RealDate.now;
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(realNow() + offset);
      else super(...args);
    }
    static now() {
      return realNow() + offset;
    }
  }
  // Called without `new`, Date returns the current time as a string.
  const shifted = new Proxy(ShiftedDate, {
    apply: () => new ShiftedDate().toString(),
  });
  globalThis.Date = shifted;
}
