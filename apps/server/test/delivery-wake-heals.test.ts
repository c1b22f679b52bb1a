import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { type Collection, MongoClient } from "mongodb";
import { pino } from "pino";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createMongoClient } from "../src/platform/database/client.js";
import { type JavaMongoServer, startMongoJavaServer } from "../src/platform/database/mongo-java-server.js";
import { newId } from "../src/platform/ids.js";
import { startWake, type Wakeable } from "../src/webhooks/delivery/wake.js";
import { eventually } from "./helpers/main-process.js";
import { createTcpProxy, type TcpProxy } from "./helpers/tcp-proxy.js";

// The wake heals (webhooks/delivery/wake.ts): a worker's change stream on webhook_deliveries that
// fails is opened again once the database takes it, with the quick poll covering meanwhile. The
// worker's wake source in this process, on mongo-java-server with its oplog (change streams),
// reached through a proxy the test cuts: the connection the stream uses drops, and new ones are
// refused until the proxy opens again. A dispatcher that counts the rounds asked of it stands in
// for the worker's; the logger's lines are read back.

vi.setConfig({ testTimeout: 120_000 });

/** Far longer than the stream needs to report an insert on a loaded machine, far shorter than the regular poll. */
const WOKEN_WITHIN_MS = 5_000;
const WAKE_INTERVAL_MS = 50;

let server: JavaMongoServer | undefined;
let proxy: TcpProxy | undefined;
const clients: MongoClient[] = [];
afterAll(async () => {
  await proxy?.cut();
  for (const client of clients) await client.close().catch(() => {});
  await server?.stop();
});

function recordingLogger() {
  const lines: { level: number; msg: string; downMs?: number }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

/** Counts the rounds asked of it; never finds work, so a poll stays relaxed (a round every 5 intervals). */
function countingDispatcher(): Wakeable & { rounds: number } {
  return {
    rounds: 0,
    foundWork: false,
    wake() {
      this.rounds++;
    },
  };
}

interface Watched {
  deliveries: Collection<{ _id: string }>;
  dispatcher: ReturnType<typeof countingDispatcher>;
}

/** A worker's wake on a server of its own with an oplog, reached through a proxy the test cuts. */
async function startWatchedWake() {
  server = await startMongoJavaServer({ oplog: true });
  const cuttable = await createTcpProxy(server.uri);
  proxy = cuttable;
  await cuttable.open();
  const databaseName = `deskline_wake_${newId("req")}`;
  // The worker's client, with the server's driver settings (its 2 s server selection bounds the
  // driver's own attempt to resume), through the proxy; the test writes past it. A half-second
  // heartbeat: how soon the driver sees the database back is its monitor's business (10 s by
  // default, longer under load), not the wake's, whose reopening this measures.
  const workerClient = await createMongoClient(`${cuttable.uri}&heartbeatFrequencyMS=500`).connect();
  const direct = await new MongoClient(server.uri).connect();
  clients.push(workerClient, direct);
  const deliveries = direct.db(databaseName).collection<{ _id: string }>("webhook_deliveries");
  await deliveries.insertOne({ _id: newId("req") });
  const dispatcher = countingDispatcher();
  const { logger, lines } = recordingLogger();
  const wake = await startWake(workerClient.db(databaseName), dispatcher, {
    wakeIntervalMs: WAKE_INTERVAL_MS,
    pollIntervalMs: 600_000,
    logger,
  });
  return { proxy: cuttable, deliveries, dispatcher, wake, lines };
}

/** An insert asks for a round within WOKEN_WITHIN_MS. */
async function insertWakes({ deliveries, dispatcher }: Watched): Promise<void> {
  const before = dispatcher.rounds;
  await deliveries.insertOne({ _id: newId("req") });
  await eventually(
    async () => dispatcher.rounds,
    (n) => n > before,
    "a round for the insert",
    WOKEN_WITHIN_MS,
  );
}

/** Rounds asked for in `ms` with no insert: the poll's, if one runs. */
async function roundsWithoutInserts({ dispatcher }: Watched, ms: number): Promise<number> {
  const before = dispatcher.rounds;
  await sleep(ms);
  return dispatcher.rounds - before;
}

// The stream opens in the background (a worker's first round, at its start, covers that
// moment): once an insert wakes it, it is open.
async function streamOpened({ deliveries, dispatcher }: Watched): Promise<void> {
  await eventually(
    async () => {
      await deliveries.insertOne({ _id: newId("req") });
      await sleep(200);
      return dispatcher.rounds;
    },
    (n) => n > 0,
    "the stream's first round",
  );
}

describe("a worker's change stream that fails", () => {
  it("falls back to the quick poll, is reopened once the database takes it again, and says so once each way", async () => {
    const { proxy: cuttable, wake, lines, ...watched } = await startWatchedWake();
    expect(wake.description).toBe("webhook wake: change stream on webhook_deliveries");
    const failed = () => lines.filter((line) => /change stream failed/.test(line.msg));
    const reopened = () => lines.filter((line) => /change stream reopened/.test(line.msg));

    await streamOpened(watched);
    await sleep(200);
    expect(await roundsWithoutInserts(watched, 800)).toBe(0);
    await insertWakes(watched);

    // The connection drops and the database stays away past the driver's own resume.
    await cuttable.cut();
    await eventually(
      async () => failed().length,
      (n) => n === 1,
      "the fall-back to polling",
      15_000,
    );
    // The quick poll covers: relaxed, a round every 5 × 50 ms.
    expect(await roundsWithoutInserts(watched, 1_200)).toBeGreaterThanOrEqual(2);
    await sleep(2_000); // a few attempts to reopen meet a closed door

    await cuttable.open();
    await eventually(
      async () => reopened().length,
      (n) => n === 1,
      "the stream reopened",
      30_000,
    );
    // The poll stopped (the reopening asked for one round at once; let it pass).
    await sleep(100);
    expect(await roundsWithoutInserts(watched, 800)).toBe(0);
    await insertWakes(watched);

    // One line each way, whatever the attempts between them.
    expect(failed()).toHaveLength(1);
    expect(failed()[0]?.level).toBe(40);
    expect(reopened()).toHaveLength(1);
    expect(reopened()[0]?.downMs).toBeGreaterThan(0);
    await wake.stop();
  });
});
