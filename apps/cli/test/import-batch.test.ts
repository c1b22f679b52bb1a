// `deskline contacts import` through the batch operation: rows go 100 a request where the server
// has it, and one by one where it does not (an older server). A loopback proxy in front of the
// real server counts the requests, and plays the older server by answering the batch path 404.
import { createServer, request as forward, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { api, newWorkspace, walkPages } from "@deskline/test-kit";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { cli, scratch, writeScratch } from "./helpers.js";

let key: string;
let proxy: { url: string; seen: string[]; server: Server };

/** Forwards everything to the run's server, recording `METHOD path`; `withoutBatch` hides the batch operation. */
async function startProxy(withoutBatch: boolean) {
  const target = new URL(inject("baseUrl"));
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    seen.push(`${req.method} ${path}`);
    if (withoutBatch && req.method === "POST" && path === "/open/v1/contacts/batch") {
      req.resume();
      res.writeHead(404, { "Content-Type": "application/json", "Request-Id": "req_0proxy" });
      const error = {
        type: "invalid_request_error",
        code: "route_not_found",
        message: "No route.",
        request_id: "req_0proxy",
      };
      res.end(JSON.stringify({ error }));
      return;
    }
    const upstream = forward(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const rowsCsv = (count: number, prefix: string) =>
  ["name,email", ...Array.from({ length: count }, (_, n) => `Row ${n},${prefix}-${n}@example.com`)].join(
    "\n",
  );

async function importThrough(file: string) {
  const result = await cli(["contacts", "import", file, "--json"], {
    key,
    env: { DESKLINE_BASE_URL: proxy.url },
  });
  return { ...result, summary: result.stdout.trim() ? JSON.parse(result.stdout) : undefined };
}

beforeEach(async () => {
  ({ key } = await newWorkspace());
});

afterEach(async () => {
  await new Promise((done) => proxy.server.close(done));
});

describe("import through batches", () => {
  it("sends 100 rows a request, and a second run finds them unchanged", async () => {
    proxy = await startProxy(false);
    const file = writeScratch(scratch(), "many.csv", rowsCsv(250, "batch"));
    const first = await importThrough(file);
    expect(first.code).toBe(0);
    expect(first.summary).toMatchObject({ rows: 250, created: 250, failed: 0 });
    const writes = proxy.seen.filter((line) => line.startsWith("POST"));
    expect(writes).toEqual(Array(3).fill("POST /open/v1/contacts/batch"));
    expect(await walkPages("/open/v1/contacts", key, { limit: 100 })).toHaveLength(250);

    const second = await importThrough(file);
    expect(second.summary).toMatchObject({ rows: 250, created: 0, unchanged: 250 });
  });

  it("falls back to one request per row when the server has no batch operation", async () => {
    proxy = await startProxy(true);
    const file = writeScratch(scratch(), "few.csv", rowsCsv(5, "single"));
    const result = await importThrough(file);
    expect(result.code).toBe(0);
    expect(result.summary).toMatchObject({ rows: 5, created: 5, failed: 0 });
    expect(proxy.seen.filter((line) => line === "POST /open/v1/contacts")).toHaveLength(5);
    const found = await api.get("/open/v1/contacts", { key, query: { email: "single-4@example.com" } });
    expect(found.body.data).toHaveLength(1);
  });
});
