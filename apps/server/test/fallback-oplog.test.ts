import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ChangeStream,
  type ChangeStreamDocument,
  type Collection,
  MongoClient,
  type ObjectId,
} from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JavaMongoServer, startMongoJavaServer } from "../src/platform/database/mongo-java-server.js";

/**
 * mongo-java-server's opt-in oplog (the change-stream test of waking workers runs on it) hears of
 * findAndModify as MongoDB's does: 1.47 logs only insert, update and delete, so the launcher adds
 * findAndModify's changes (scripts/mongo-java-server/FindAndModifyOplog.java). Agenda saves a
 * unique job with a findOneAndUpdate upsert; see "Waking workers" in docs/decisions.md. Checked on
 * both backends, in memory and on an H2 file, whatever the run's database.
 */

interface Job {
  /** Ours where a test gives one, the server's (an ObjectId) for an upsert's. */
  _id?: string | ObjectId;
  name: string;
  runs?: number;
  next?: string;
}

// A change stream's next event; a missing one fails the test instead of hanging it.
const EVENT_WAIT_MS = 10_000;

interface Oplog {
  dir?: string | undefined;
  server: JavaMongoServer;
  client: MongoClient;
  jobs: Collection<Job>;
  stream: ChangeStream<Job, ChangeStreamDocument<Job>>;
}

/** A server with its oplog on, and a stream over its jobs, for the tests of the calling describe. */
function useOplog(onFile: boolean): Oplog {
  const oplog = {} as Oplog;
  beforeAll(async () => {
    oplog.dir = onFile ? await mkdtemp(join(tmpdir(), "deskline-oplog-")) : undefined;
    oplog.server = await startMongoJavaServer({
      oplog: true,
      file: oplog.dir && join(oplog.dir, "data.mv.db"),
    });
    oplog.client = await new MongoClient(oplog.server.uri).connect();
    oplog.jobs = oplog.client.db("oplog_test").collection<Job>("jobs");
    // The collection exists before the stream opens, as Agenda's does.
    await oplog.jobs.insertOne({ _id: "job_seed", name: "seed" });
    oplog.stream = oplog.jobs.watch([], { fullDocument: "updateLookup" });
    // Opens the stream now (the driver opens it on the first read): later writes are after it.
    expect(await oplog.stream.tryNext()).toBeNull();
  }, 60_000);

  afterAll(async () => {
    await oplog.stream?.close();
    await oplog.client?.close();
    await oplog.server?.stop();
    if (oplog.dir) await rm(oplog.dir, { recursive: true, force: true });
  });
  return oplog;
}

async function nextChange(stream: Oplog["stream"]): Promise<ChangeStreamDocument<Job>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      stream.next(),
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error("no change event within 10 s")), EVENT_WAIT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe.each([
  ["in memory", false],
  ["on an H2 file", true],
] as const)("mongo-java-server's oplog %s", (_, onFile) => {
  const oplog = useOplog(onFile);
  const nextEvent = () => nextChange(oplog.stream);

  it("an upsert that inserts is an insert with the document", async () => {
    const before = await oplog.jobs.findOneAndUpdate(
      { name: "lane we_1" },
      { $set: { next: "now" }, $setOnInsert: { runs: 0 } },
      { upsert: true, returnDocument: "before" },
    );
    expect(before).toBeNull();
    const stored = await oplog.jobs.findOne({ name: "lane we_1" });
    expect(stored).toMatchObject({ name: "lane we_1", next: "now", runs: 0 });

    const event = await nextEvent();
    expect(event.operationType).toBe("insert");
    if (event.operationType !== "insert") return;
    expect(event.documentKey).toEqual({ _id: stored?._id });
    expect(event.fullDocument).toEqual(stored);
  });

  it("a findOneAndUpdate that changes a document is an update whose lookup finds it", async () => {
    const after = await oplog.jobs.findOneAndUpdate(
      { name: "lane we_1" },
      { $set: { next: "later" }, $inc: { runs: 1 } },
      { upsert: true, returnDocument: "after" },
    );
    expect(after).toMatchObject({ name: "lane we_1", next: "later", runs: 1 });

    const event = await nextEvent();
    expect(event.operationType).toBe("update");
    if (event.operationType !== "update") return;
    // The lookup found it by _id. (The library's update events, updateOne's too, carry the update
    // as their documentKey and no `ns`; Agenda's channel reads only the type and the document.)
    expect(event.fullDocument).toEqual(after);
  });

  it("a findOneAndDelete is a delete of its _id", async () => {
    const removed = await oplog.jobs.findOneAndDelete({ name: "seed" });
    expect(removed).toEqual({ _id: "job_seed", name: "seed" });

    const event = await nextEvent();
    expect(event.operationType).toBe("delete");
    if (event.operationType !== "delete") return;
    expect(event.documentKey).toEqual({ _id: "job_seed" });
  });

  it("a findAndModify that changes nothing is no event; the write after it is the next", async () => {
    // Matches nothing and may not insert; matches but sets what is there; an upsert refused.
    expect(await oplog.jobs.findOneAndUpdate({ name: "none" }, { $set: { next: "x" } })).toBeNull();
    const lane = await oplog.jobs.findOneAndUpdate({ name: "lane we_1" }, { $set: { next: "later" } });
    expect(lane).toMatchObject({ name: "lane we_1", next: "later" });
    await expect(
      oplog.jobs.findOneAndUpdate({ name: "taken" }, { $setOnInsert: { _id: lane?._id } }, { upsert: true }),
    ).rejects.toThrow(/duplicate key/);
    expect(await oplog.jobs.countDocuments({ name: "taken" })).toBe(0);

    await oplog.jobs.insertOne({ _id: "job_marker", name: "marker" });
    const event = await nextEvent();
    expect(event.operationType).toBe("insert");
    if (event.operationType !== "insert") return;
    expect(event.documentKey).toEqual({ _id: "job_marker" });
  });

  it("the commands it already logged are logged as before", async () => {
    await oplog.jobs.updateOne({ _id: "job_marker" }, { $set: { runs: 5 } });
    const event = await nextEvent();
    expect(event.operationType).toBe("update");
    if (event.operationType !== "update") return;
    expect(event.fullDocument).toEqual({ _id: "job_marker", name: "marker", runs: 5 });
  });
});
