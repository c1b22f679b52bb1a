import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { BenchContext } from "./environment.js";
import type { Floor, FloorServer } from "./scenario.js";

/**
 * The floor of a scenario: a bare `node:http` server on 127.0.0.1 that answers each request with
 * the JSON of `answer(path)`, and nothing else (no framework, no key, no validation, no logs).
 * Measured under the same load as the API, it is the most any HTTP API on this machine and
 * database could serve, so `API/floor` is what our own code costs.
 */
async function startHttpFloor(answer: (path: string) => Promise<unknown>): Promise<FloorServer> {
  const server = createServer((request, response) => {
    answer(request.url ?? "/").then(
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
