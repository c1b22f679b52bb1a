// A loopback HTTP proxy in front of the server that checks every answer against the spec, so the
// end-to-end tests check what the CLI, the SDK and the docs' curl commands receive without
// touching them: each public face just gets the proxy's URL as its base URL.
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";
import { assertMatchesSpec } from "../../apps/server/test/helpers/api.js";
import { findOperation } from "../../apps/server/test/helpers/contract.js";

export interface Exchange {
  method: string;
  path: string;
  status: number;
  /** The spec operation it matched; undefined for a request outside the spec (never expected). */
  operationId: string | undefined;
  body: unknown;
  /** Why the answer breaks the spec, if it does. */
  problem?: string;
}

export interface SpecProxy {
  url: string;
  exchanges: Exchange[];
  /** Exchanges since `mark` (an index into `exchanges`) that broke the spec. */
  problems(since?: number): Exchange[];
  close(): Promise<void>;
}

function check(method: string, path: string, status: number, headers: IncomingHttpHeaders, body: unknown) {
  const operation = findOperation(method, path);
  if (!operation) return { operationId: undefined, problem: `${method} ${path} is no operation of the spec` };
  try {
    assertMatchesSpec(operation, status, body);
    if (!String(headers["request-id"] ?? "").startsWith("req_")) throw new Error("no Request-Id header");
    return { operationId: operation.operationId };
  } catch (error) {
    return { operationId: operation.operationId, problem: (error as Error).message };
  }
}

export async function startSpecProxy(upstream: string): Promise<SpecProxy> {
  const target = new URL(upstream);
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const raw = Buffer.concat(chunks);
          const method = req.method ?? "GET";
          const path = new URL(req.url ?? "/", upstream).pathname;
          const status = answer.statusCode ?? 0;
          const isJson = String(answer.headers["content-type"]).includes("application/json");
          let body: unknown = raw.toString("utf8");
          let problem: string | undefined;
          try {
            if (isJson && raw.length > 0) body = JSON.parse(body as string);
          } catch {
            problem = "invalid JSON";
          }
          const checked = check(method, path, status, answer.headers, body);
          exchanges.push({ method, path, status, body, ...checked, problem: problem ?? checked.problem });
          res.writeHead(status, answer.headers).end(raw);
        });
      },
    );
    forward.on("error", (error) => {
      exchanges.push({
        method: req.method ?? "",
        path: req.url ?? "",
        status: 0,
        operationId: undefined,
        body: "",
        problem: error.message,
      });
      res.writeHead(502).end();
    });
    req.pipe(forward);
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((done) => server.once("listening", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    problems: (since = 0) => exchanges.slice(since).filter((e) => e.problem !== undefined),
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
