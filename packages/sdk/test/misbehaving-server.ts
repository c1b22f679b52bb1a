// A small HTTP server on 127.0.0.1 that answers from a script, to drive the SDK's retries,
// timeouts and connection handling into the cases a healthy server never produces.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

/** One scripted answer: a status and JSON body, a hang (never answers), or a dropped connection. */
export type Step =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true }
  | { drop: true };

export interface MisbehavingServer {
  baseUrl: string;
  received: Received[];
  close(): Promise<void>;
}

const contact = {
  id: "con_0Vbk0000000000000000",
  object: "contact",
  name: "Ada",
};
export const OK: Step = { status: 200, body: contact };

export const apiError = (status: number, code: string, type = "api_error"): Step => ({
  status,
  body: { error: { type, code, message: `scripted ${code}`, request_id: "req_scripted" } },
  headers: { "Request-Id": "req_scripted" },
});

/** Answers the steps in order; after the last one, repeats it. */
export async function misbehavingServer(steps: Step[]): Promise<MisbehavingServer> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        at: Date.now(),
      });
      const step = steps[Math.min(received.length - 1, steps.length - 1)] as Step;
      if ("hang" in step) return;
      if ("drop" in step) {
        req.socket.destroy();
        return;
      }
      res.writeHead(step.status, { "Content-Type": "application/json", ...step.headers });
      res.end(step.body === undefined ? "" : JSON.stringify(step.body));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
