import type { Collection, Document } from "mongodb";
import { startMongoJavaServer } from "../src/platform/database/mongo-java-server.js";
import { newId } from "../src/platform/ids.js";
import { DeliveryAttempts } from "../src/webhooks/deliveries/attempts.js";
import { newRunId, seedMany, startScenarioServer } from "./environment.js";

/**
 * `pnpm bench:retention`: what a retention sweep costs the API (docs/operations.md "Retention").
 * On MONGODB_URI, else on the embedded fallback (mongo-java-server, whatever DESKLINE_EMBEDDED_DB
 * says: the database the sweeps are slowest on), a server's `delivery_attempts` holds
 * BENCH_RETENTION_OLD attempts past retention beside as many kept ones, and the bench requests
 * `GET /open/v1/contacts` one after another: first alone, then while the attempts' sweep (batched,
 * platform/database/batch-delete.ts) removes the old ones, then while one `deleteMany` removes the
 * same number at once (how the sweeps removed them before). It prints how long each removal took
 * and the requests' p50 and p99 meanwhile.
 *
 *   BENCH_RETENTION_OLD=50000  attempts past retention (and as many kept)
 *   BENCH_SECONDS=3            seconds of requests without a sweep
 */

const DAY = 86_400_000;
const RETENTION = 90 * DAY;
const OLD = Number(process.env.BENCH_RETENTION_OLD ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

/** An attempt as a worker records it, with an answer of a few hundred bytes. */
const attempt = (workspaceId: string, at: number): Document => ({
  _id: newId("att", at),
  workspace_id: workspaceId,
  delivery_id: newId("dlv", at),
  endpoint_id: "we_bench",
  event_id: newId("evt", at),
  event_type: "contact.created",
  attempt: 1,
  status_code: 200,
  duration_ms: 12,
  error: null,
  succeeded: true,
  response: {
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ok: true, pad: "x".repeat(400) }),
  },
  created_at: new Date(at),
});

/** Old attempts first, as they were written, then the kept ones. */
async function seedAttempts(collection: Collection<Document>, workspaceId: string, ages: number[]) {
  for (let i = 0; i < ages.length; i += 5_000) {
    await collection.insertMany(
      ages.slice(i, i + 5_000).map((age) => attempt(workspaceId, Date.now() - age)),
    );
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Requests the contacts list one after another until `done` settles (or for `seconds`). */
async function requestsDuring(baseUrl: string, apiKey: string, done: Promise<unknown>) {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  const times: number[] = [];
  while (!finished) {
    const started = performance.now();
    const answer = await fetch(`${baseUrl}/open/v1/contacts?limit=20`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    await answer.arrayBuffer();
    if (!answer.ok) throw new Error(`GET /open/v1/contacts: ${answer.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return `${times.length} requests, p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms, max ${(times.at(-1) ?? 0).toFixed(1)} ms`;
}

/** Runs `removal`, timing it and the requests meanwhile. */
async function measure(
  what: string,
  context: { baseUrl: string; apiKey: string },
  removal: () => Promise<number>,
) {
  const started = performance.now();
  const removing = removal();
  const requests = await requestsDuring(context.baseUrl, context.apiKey, removing);
  const removed = await removing;
  console.log(
    `[retention bench] ${what}: ${removed} removed in ${((performance.now() - started) / 1000).toFixed(2)} s; ${requests}`,
  );
}

async function main() {
  const external = process.env.MONGODB_URI;
  const database = external ? undefined : await startMongoJavaServer({});
  const uri = external ?? (database?.uri as string);
  const runId = newRunId();
  const { context, stop } = await startScenarioServer(uri, `deskline_bench_retention_${runId}`, runId);
  try {
    await seedMany(context, 200, "/open/v1/contacts", (n) => ({
      name: `Contact ${n}`,
      email: `c${n}-${runId}@example.com`,
    }));
    const collection = context.db.collection("delivery_attempts");
    const old = Array.from({ length: OLD }, (_, n) => RETENTION + DAY + n);
    const kept = Array.from({ length: OLD }, (_, n) => DAY + n);
    await seedAttempts(collection, context.workspaceId, [...old, ...kept]);
    console.log(
      `[retention bench] ${OLD} attempts past retention beside ${OLD} kept, on ${external ? "MONGODB_URI" : "mongo-java-server"}`,
    );

    const idle = new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
    await measure("no sweep", context, () => idle.then(() => 0));
    await measure("the sweep, in batches", context, () => new DeliveryAttempts(context.db).sweep(RETENTION));
    await seedAttempts(collection, context.workspaceId, old);
    const cutoff = new Date(Date.now() - RETENTION);
    await measure(
      "one deleteMany",
      context,
      async () => (await collection.deleteMany({ created_at: { $lt: cutoff } })).deletedCount,
    );
  } finally {
    await stop();
    await database?.stop();
  }
}

await main();
