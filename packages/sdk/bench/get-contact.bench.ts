// `pnpm bench` for the SDK: `deskline.contacts.get` against a bare `undici.request` of the same
// URL (the floor: no SDK at all), on the same real server in the same process, sequentially and
// 16 at a time. Prints the ratio SDK / floor (target ≥ 0.8×). Not a test: it asserts nothing.
//
//   BENCH_SECONDS=5   seconds per measurement
//   MONGODB_URI=...   a real deployment instead of the embedded database
// The server as the tests run it (its shared test harness), not the server's own benchmark kit.
import { startTestServer } from "@deskline/test-kit";
import { Agent, request } from "undici";
import { Deskline } from "../src/index.js";

const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const WARMUP_SECONDS = 2;
// Slices of a quarter second: the noise of a shared machine comes in bursts of seconds, so fine
// interleaving spreads it evenly over the contenders.
const ROUNDS = Math.max(5, Math.round(SECONDS * 4));

/** Runs `operation` on `concurrency` loops for `seconds`; returns completed operations and time. */
async function run(operation: () => Promise<unknown>, concurrency: number, seconds: number) {
  const deadline = performance.now() + seconds * 1000;
  let completed = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      await operation();
      completed++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { completed, seconds: (performance.now() - started) / 1000 };
}

/**
 * Operations per second of each contender, measured in short alternating rounds so that noise
 * (a shared machine, the server's JIT, the database) falls on all of them alike.
 */
async function compare(operations: (() => Promise<unknown>)[], concurrency: number): Promise<number[]> {
  for (const operation of operations) await run(operation, concurrency, WARMUP_SECONDS);
  const totals = operations.map(() => ({ completed: 0, seconds: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, operation] of operations.entries()) {
      const { completed, seconds } = await run(operation, concurrency, SECONDS / ROUNDS);
      const total = totals[index] as { completed: number; seconds: number };
      total.completed += completed;
      total.seconds += seconds;
    }
  }
  return totals.map(({ completed, seconds }) => completed / seconds);
}

/** A call that must succeed, answering its JSON body. */
async function call<T>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
): Promise<T> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

// On MONGODB_URI when set (a database of its own, dropped at the end), else the embedded one.
const server = await startTestServer({
  databaseName: `deskline_sdk_bench_${Date.now().toString(36)}`,
  dropDatabase: true,
});
try {
  const admin = <T>(path: string, body: unknown) =>
    call<T>(server.baseUrl, server.adminToken, "POST", path, body);
  const workspace = await admin<{ id: string }>("/admin/v1/workspaces", { name: "Benchmark" });
  const key = await admin<{ key: string }>(`/admin/v1/workspaces/${workspace.id}/api-keys`, {
    name: "bench",
    scopes: ["contacts:read", "contacts:write"],
  });
  const context = { baseUrl: server.baseUrl, apiKey: key.key };
  const contact = await call<{ id: string }>(context.baseUrl, context.apiKey, "POST", "/open/v1/contacts", {
    name: "Bench",
  });
  const url = `${context.baseUrl}/open/v1/contacts/${contact.id}`;

  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const bare = async () => {
    const response = await request(url, {
      headers: { authorization: `Bearer ${context.apiKey}` },
      dispatcher,
    });
    if (response.statusCode !== 200) throw new Error(`bare request: ${response.statusCode}`);
    return response.body.json();
  };
  const deskline = new Deskline({ apiKey: context.apiKey, baseUrl: context.baseUrl });
  const sdk = () => deskline.contacts.get(contact.id);
  const overFetch = new Deskline({ apiKey: context.apiKey, baseUrl: context.baseUrl, fetch });
  const sdkFetch = () => overFetch.contacts.get(contact.id);

  const rows: string[][] = [];
  for (const concurrency of [1, 16]) {
    const [floor, undiciSdk, fetchSdk] = (await compare([bare, sdk, sdkFetch], concurrency)) as [
      number,
      number,
      number,
    ];
    rows.push([
      concurrency === 1 ? "sequential" : `${concurrency} concurrent`,
      floor.toFixed(0),
      undiciSdk.toFixed(0),
      `${(undiciSdk / floor).toFixed(2)}×`,
      fetchSdk.toFixed(0),
      `${(fetchSdk / floor).toFixed(2)}×`,
    ]);
  }
  const header = [
    "contacts.get",
    "bare undici req/s",
    "SDK req/s",
    "SDK / bare",
    "SDK over fetch req/s",
    "fetch / bare",
  ];
  console.log(`\nSDK benchmark (${SECONDS} s per measurement, server in this process)\n`);
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  await dispatcher.close();
} finally {
  await server.stop();
}
