import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Document } from "mongodb";
import { uniqueKeysOf } from "../src/contacts/contacts.js";
import { newId } from "../src/platform/ids.js";
import type { BenchContext } from "./environment.js";
import type { Floor, FloorServer } from "./scenario.js";

/**
 * The floor of a scenario: a bare `node:http` server on 127.0.0.1 that answers each request with
 * the JSON of `answer(path, body)` (the request's body parsed as JSON, if it has one), and nothing
 * else (no framework, no key, no validation, no logs).
 * Measured under the same load as the API, it is the most any HTTP API on this machine and
 * database could serve, so `API/floor` is what our own code costs.
 */
async function startHttpFloor(
  answer: (path: string, body: unknown) => Promise<unknown>,
): Promise<FloorServer> {
  const server = createServer((request, response) => {
    const respond = (text: string) =>
      Promise.resolve()
        .then(() => answer(request.url ?? "/", text ? JSON.parse(text) : undefined))
        .then(
          (value) => {
            const body = JSON.stringify(value);
            response.writeHead(value === null ? 404 : 200, {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
            });
            response.end(body);
          },
          (error: Error) => {
            response.writeHead(500).end(error.message);
          },
        );
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => void respond(Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}

/** A get's floor: the record whose id ends the path, by `{_id, workspace_id}` as the API reads it. */
export function getByIdFloor(collection: string): Floor {
  return {
    label: "node:http + findOne({_id, workspace_id})",
    start(context: BenchContext) {
      const records = context.db.collection<{ _id: string; workspace_id: string }>(collection);
      return startHttpFloor((path) =>
        records.findOne({ _id: path.slice(path.lastIndexOf("/") + 1), workspace_id: context.workspaceId }),
      );
    },
  };
}

/**
 * A create's floor: the body parsed, then the one insert a create needs, into `contacts` on the
 * same database (same indexes), as the raw baseline makes it: a fresh id in a workspace of its
 * own, the email's unique key, time stamps. The answer is the document.
 */
export function createContactFloor(): Floor {
  return {
    label: "node:http + JSON.parse + insertOne into contacts",
    start(context: BenchContext) {
      const contacts = context.db.collection<Document & { _id: string }>("contacts");
      const workspaceId = newId("ws");
      return startHttpFloor(async (_path, body) => {
        const fields = body as { email?: string | null };
        const email = fields.email?.toLowerCase() ?? null;
        const now = new Date();
        const doc = {
          ...fields,
          _id: newId("con"),
          workspace_id: workspaceId,
          version: 0,
          email_lc: email,
          unique_keys: uniqueKeysOf(workspaceId, { email_lc: email, external_ids: {} }).map((k) => k.key),
          created_at: now,
          updated_at: now,
        };
        await contacts.insertOne(doc);
        return doc;
      });
    },
  };
}
