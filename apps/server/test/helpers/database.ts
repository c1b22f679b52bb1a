import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Collection, type Db, type Document, MongoClient } from "mongodb";
import { afterAll, inject, it } from "vitest";
import { startMongoJavaServer } from "../../src/platform/database/mongo-java-server.js";

/**
 * The run's database, opened directly: for assertions the API cannot make (a secret's grace
 * period, an event still pending on its document). Closed after the file's tests.
 */
export function runDatabase(): () => Promise<Db> {
  let client: MongoClient | undefined;
  afterAll(() => client?.close());
  return async () => {
    client ??= await new MongoClient(inject("mongodbUri")).connect();
    return client.db(inject("databaseName"));
  };
}

/**
 * mongo-java-server on an H2 file of its own (the persistent fallback, `pnpm start` without
 * mongod): `first` works on one collection of it, then the server stops and starts again on the
 * same file and `reopened` sees the collection as the file kept it. The file goes afterwards.
 */
export async function acrossH2Restart<T extends Document>(
  first: (collection: Collection<T>) => Promise<void>,
  reopened: (collection: Collection<T>) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "deskline-h2-"));
  const file = join(dir, "data.mv.db");
  const withCollection = async (work: (collection: Collection<T>) => Promise<void>) => {
    const server = await startMongoJavaServer({ file });
    const client = await new MongoClient(server.uri).connect();
    try {
      await work(client.db("h2_restart").collection<T>("records"));
    } finally {
      await client.close();
      await server.stop();
    }
  };
  try {
    await withCollection(first);
    await withCollection(reopened);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The documents a fallback plan's test expects, by `_id`: the model its queries are checked against. */
export type Model<T> = Map<string, T>;

/**
 * The two tests of a plan the launcher adds to the fallback (docs/decisions.md, "The embedded
 * fallback's query plans"), each against a model: `exercise` writes and checks as it goes, on a
 * new collection of the run's database (in memory), then on an H2 file of its own, after which
 * the file reopens and `reopened` checks what it kept (the launcher rebuilds its index from it).
 */
export function itAnswersAsTheModel<T extends Document>(
  inMemory: string,
  exercise: (collection: Collection<T>, model: Model<T>) => Promise<void>,
  reopened: (collection: Collection<T>, model: Model<T>) => Promise<void>,
): void {
  const db = runDatabase();
  it(inMemory, async () => {
    const collection = (await db()).collection<T>(`plan_${randomBytes(4).toString("hex")}`);
    try {
      await exercise(collection, new Map());
    } finally {
      await collection.drop();
    }
  });

  it("answer so on mongo-java-server's H2 file too, and after it reopens the file", async () => {
    const model: Model<T> = new Map();
    await acrossH2Restart<T>(
      (collection) => exercise(collection, model),
      (collection) => reopened(collection, model),
    );
  }, 120_000);
}
