import { MongoNetworkError, MongoServerClosedError, MongoServerError } from "mongodb";
import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../src/platform/database/errors.js";

// Which driver errors mean "the database is away" (503, retry) rather than a bug (500). The
// crash trials (pnpm soak) cut the database under load; every transient error must land here.
describe("isDatabaseUnavailable", () => {
  const named = (name: string) => Object.assign(new Error("pool"), { name });
  it.each([
    ["a network error", new MongoNetworkError("connection reset")],
    ["a closed server", new MongoServerClosedError()],
    ["a closed pool", named("MongoPoolClosedError")],
    ["no pooled connection in time", named("MongoWaitQueueTimeoutError")],
  ])("is true for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });
  it.each([
    ["a duplicate key", new MongoServerError({ code: 11000, errmsg: "E11000 duplicate key" })],
    ["a plain bug", new TypeError("x is undefined")],
  ])("is false for %s", (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
