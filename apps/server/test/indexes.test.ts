import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { newId } from "../src/platform/ids.js";
import { startInProcess } from "./helpers/in-process.js";

/**
 * Every unique index the server creates leads with `workspace_id`, so a sharded cluster (sharded
 * by workspace) can keep it; `_id` and the exceptions docs/operations.md lists under "Indexes"
 * (each with its reason) are the only others. A real server (the composition main runs, ROLE=all:
 * the API's and the workers' indexes, Agenda's too) starts on a new database, then every
 * collection's indexes are read.
 */

const operations = readFileSync(join(import.meta.dirname, "../../../docs/operations.md"), "utf8");

/** `collection.index` names listed as exceptions in the guide's "Indexes" section. */
function documentedExceptions(): Set<string> {
  const section = operations.split(/^### Indexes$/m)[1]?.split(/^##/m)[0] ?? "";
  return new Set([...section.matchAll(/^- `([a-z_]+\.[a-z_]+)`/gm)].map((match) => match[1] as string));
}

const clients: MongoClient[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

describe("the server's unique indexes", () => {
  it("each begins with workspace_id, or is _id, or is a documented exception", async () => {
    const databaseName = `deskline_indexes_${newId("req")}`;
    // Resolves once it delivers: its database is prepared and Agenda's indexes are made.
    await startInProcess(
      loadConfig({ MONGODB_URI: inject("mongodbUri"), MONGODB_DATABASE: databaseName, ROLE: "all" }),
    );
    const client = await new MongoClient(inject("mongodbUri")).connect();
    clients.push(client);
    const db = client.db(databaseName);
    const unique: string[] = [];
    const offending: string[] = [];
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      for (const index of await db.collection(name).listIndexes().toArray()) {
        if (!index.unique || index.name === "_id_") continue;
        const label = `${name}.${index.name}`;
        unique.push(label);
        if (Object.keys(index.key)[0] !== "workspace_id" && !documentedExceptions().has(label)) {
          offending.push(`${label} ${JSON.stringify(index.key)}`);
        }
      }
    }
    // The rule has something to hold over: the record collections' unique indexes are there.
    expect(unique).toEqual(
      expect.arrayContaining([
        "api_keys.workspace_newest_unique",
        "contacts.unique_keys",
        "webhook_deliveries.one_pending_in_workspace",
      ]),
    );
    expect(offending).toEqual([]);
    // No exception is listed that the server no longer has.
    for (const exception of documentedExceptions()) expect(unique).toContain(exception);
    // What the contact search and the phone filter read on MongoDB (docs/decisions.md, "Search by
    // word prefix" and "Phones in E.164"); the fallback has plans of its own for them.
    const contactIndexes = await db.collection("contacts").listIndexes().toArray();
    expect(Object.fromEntries(contactIndexes.map((index) => [index.name, index.key]))).toMatchObject({
      workspace_search_keys_newest: { workspace_id: 1, search_keys: 1, _id: -1 },
      workspace_phone_e164_newest: { workspace_id: 1, phone_e164: 1, _id: -1 },
    });
  });
});
