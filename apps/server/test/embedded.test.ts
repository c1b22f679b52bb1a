import { Writable } from "node:stream";
import { MongoClient } from "mongodb";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { startEmbeddedDatabase } from "../src/platform/database/embedded.js";
import { rememberedFailure } from "../src/platform/database/embedded-mongod.js";
import { eventually } from "./helpers/main-process.js";

/** A logger whose lines this test reads. */
function recordingLogger() {
  const lines: { msg: string; uri?: string; trace?: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

describe("the embedded database", () => {
  it("DESKLINE_EMBEDDED_DB pins mongo-java-server: one log line says which and why; atomic; gone after stop", async () => {
    const { logger, lines } = recordingLogger();
    const database = await startEmbeddedDatabase(logger, "mongo-java-server");
    const client = new MongoClient(database.uri, { serverSelectionTimeoutMS: 1000 });
    try {
      expect(database.kind).toBe("mongo-java-server");
      expect(new URL(database.uri.replace("mongodb:", "http:")).hostname).toBe("127.0.0.1");
      expect(lines.map((line) => line.msg)).toEqual([
        expect.stringMatching(
          /^embedded database: mongo-java-server [\d.]+ \(in memory\), because DESKLINE_EMBEDDED_DB=mongo-java-server$/,
        ),
      ]);
      expect(lines[0]?.uri).toBe(database.uri);

      // What the server relies on: racing conditional updates, exactly one wins.
      const counters = client.db("embedded_test").collection<{ _id: string; version: number }>("c");
      await counters.insertOne({ _id: "x", version: 0 });
      const results = await Promise.all(
        Array.from({ length: 16 }, () =>
          counters.updateOne({ _id: "x", version: 0 }, { $inc: { version: 1 } }),
        ),
      );
      expect(results.map((r) => r.modifiedCount).sort()).toEqual([...Array(15).fill(0), 1]);

      // A command the library fails with an exception of its own answers only "Unknown error":
      // its trace is logged. Not the change-stream probe a worker makes at every start.
      await expect(counters.aggregate([{ $changeStream: {} }]).toArray()).rejects.toThrow(/Unknown error/);
      const pipelineUpdate = { update: "c", updates: [{ q: { _id: "x" }, u: [{ $set: { b: 1 } }] }] };
      await expect(client.db("embedded_test").command(pipelineUpdate)).rejects.toThrow(/Unknown error/);
      const failed = await eventually(
        async () =>
          lines.filter((line) => line.msg === "embedded database: mongo-java-server failed a command"),
        (found) => found.length > 0,
        "the failed command's log line",
      );
      expect(failed).toHaveLength(1);
      expect(failed[0]?.trace).toMatch(
        /Unknown error!\njava\.lang\.ClassCastException: [\s\S]*\n\tat de\.bwaldvogel\./,
      );
    } finally {
      await client.close();
      await database.stop();
    }
    const after = new MongoClient(database.uri, { serverSelectionTimeoutMS: 300 });
    await expect(after.db("admin").command({ ping: 1 })).rejects.toThrow();
    await after.close();
  });

  it("DESKLINE_EMBEDDED_DB takes only the documented values", () => {
    expect(loadConfig({}).embeddedDatabase).toBe("auto");
    expect(loadConfig({ DESKLINE_EMBEDDED_DB: "mongo-java-server" }).embeddedDatabase).toBe(
      "mongo-java-server",
    );
    expect(() => loadConfig({ DESKLINE_EMBEDDED_DB: "ferretdb" })).toThrow(ConfigError);
  });

  it("DESKLINE_EMBEDDED_DB=off (the container image's) starts none: MONGODB_URI is required, said clearly", () => {
    expect(() => loadConfig({ DESKLINE_EMBEDDED_DB: "off" })).toThrow(ConfigError);
    expect(() => loadConfig({ DESKLINE_EMBEDDED_DB: "off", MONGODB_URI: " " })).toThrow(
      /^MONGODB_URI is required: DESKLINE_EMBEDDED_DB=off/,
    );
    const uri = "mongodb://mongo:27017/?replicaSet=rs0";
    expect(loadConfig({ DESKLINE_EMBEDDED_DB: "off", MONGODB_URI: uri })).toMatchObject({
      embeddedDatabase: "off",
      mongodbUri: uri,
    });
  });
});

describe("the mongod download's memo", () => {
  it("a failed mongod download is remembered for the hour after it, and not while its time is still to come", () => {
    const url = "https://fastdl.mongodb.org/linux/mongodb-linux-x86_64-debian12-8.0.4.tgz";
    const now = Date.now();
    const failed = (agoMs: number) => ({ url, failedAt: now - agoMs, reason: "unreachable" });
    expect(rememberedFailure(failed(0), url, now)).toBe(true);
    expect(rememberedFailure(failed(59 * 60_000), url, now)).toBe(true);
    expect(rememberedFailure(failed(60 * 60_000), url, now)).toBe(false);
    expect(rememberedFailure(failed(0), `${url}.other`, now)).toBe(false);
    // Written by a process whose clock ran 60 days ahead: it would otherwise hold for 60 days.
    expect(rememberedFailure(failed(-60 * 86_400_000), url, now)).toBe(false);
    expect(rememberedFailure(failed(-1), url, now)).toBe(false);
  });
});
