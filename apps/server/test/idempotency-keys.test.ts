import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { IdempotencyKeys } from "../src/platform/idempotency/idempotency-keys.js";
import { newId } from "../src/platform/ids.js";

// The store's idempotency records on the run's database, driven directly: a request whose
// process died cannot be staged over HTTP, and these are the cases where ownership matters.
let client: MongoClient;
let keys: IdempotencyKeys;
beforeAll(() => {
  client = new MongoClient(inject("mongodbUri"));
  keys = new IdempotencyKeys(client.db(inject("databaseName")), 24 * 3_600_000);
});
afterAll(() => client.close());

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

describe("idempotency keys: ownership", () => {
  it("a key whose request died is taken over once; the old owner can neither complete nor release it", async () => {
    const id = `${newId("ws")}:takeover`;
    const first = await keys.reserve(id, "fp", minutesAgo(5)); // its lock ran out 4 minutes ago
    expect(first.outcome).toBe("reserved");

    const racers = await Promise.all(Array.from({ length: 4 }, () => keys.reserve(id, "fp")));
    const winners = racers.filter((reservation) => reservation.outcome === "reserved");
    expect(winners).toHaveLength(1);
    expect(racers.filter((reservation) => reservation.outcome === "in_flight")).toHaveLength(3);

    if (first.outcome !== "reserved") throw new Error("unreachable");
    await keys.release(id, first.owner);
    await keys.complete(id, first.owner, { status: 201, body: { stale: true } });
    expect(await keys.reserve(id, "fp")).toEqual({ outcome: "in_flight" });

    const winner = winners[0];
    if (winner?.outcome !== "reserved") throw new Error("unreachable");
    await keys.complete(id, winner.owner, { status: 201, body: { fresh: true } });
    expect(await keys.reserve(id, "fp")).toEqual({
      outcome: "replay",
      response: { status: 201, body: { fresh: true } },
    });
  });

  it("the owner's release frees the key for a retry", async () => {
    const id = `${newId("ws")}:release`;
    const reservation = await keys.reserve(id, "fp");
    if (reservation.outcome !== "reserved") throw new Error(`expected reserved, got ${reservation.outcome}`);
    await keys.release(id, reservation.owner);
    expect((await keys.reserve(id, "fp")).outcome).toBe("reserved");
  });

  it("an expired key that was not swept yet counts as gone", async () => {
    const id = `${newId("ws")}:expired`;
    const old = await keys.reserve(id, "fp-old", minutesAgo(25 * 60));
    if (old.outcome !== "reserved") throw new Error("unreachable");
    await keys.complete(id, old.owner, { status: 201, body: {} });
    expect((await keys.reserve(id, "fp-new")).outcome).toBe("reserved");
  });
});
