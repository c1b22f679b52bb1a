import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Collection, type Db, type Document, MongoClient } from "mongodb";
import { afterAll, inject } from "vitest";
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
