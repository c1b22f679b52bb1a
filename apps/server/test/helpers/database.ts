import { type Db, MongoClient } from "mongodb";
import { afterAll, inject } from "vitest";

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
