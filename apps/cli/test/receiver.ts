// A developer's webhook receiver as the README tells them to write it: node `http` and the
// verifier's node middleware. It keeps what arrived (raw bytes and headers of each verified
// delivery) and counts what the middleware refused, so a test can demand that every forwarded
// event verified.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type NodeWebhookRequest, nodeWebhookMiddleware } from "@deskline/webhook-verifier/node";
import { AGAIN, giveUpAfter, retry } from "../../server/src/platform/backoff.js";

export interface Received {
  id: string;
  type: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Deliveries the middleware refused (bad or missing signature). */
  refused: number;
  close(): Promise<void>;
  /** Waits until `predicate` holds of what arrived, polling every 50 ms. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
}

export async function startReceiver(secret: string): Promise<Receiver> {
  const received: Received[] = [];
  const state = { refused: 0 };
  const verify = nodeWebhookMiddleware(secret, {
    handler: (event, req: NodeWebhookRequest) => {
      received.push({ id: event.id, type: event.type, body: req.rawBody as Buffer, headers: req.headers });
    },
  });
  const server: Server = createServer(async (req: NodeWebhookRequest, res) => {
    // Keep the raw bytes for the test (a body parser would do the same); the middleware uses them.
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    req.rawBody = Buffer.concat(chunks);
    res.on("finish", () => {
      if (res.statusCode >= 400) state.refused++;
    });
    await verify(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    get refused() {
      return state.refused;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
    async waitFor(predicate, timeoutMs = 30_000) {
      const timedOut = () =>
        new Error(`receiver: timed out; got ${received.map((r) => `${r.type} ${r.id}`).join(", ")}`);
      await retry({ firstMs: 50 }, async () => (predicate(received) ? true : AGAIN), {
        giveUp: giveUpAfter(timeoutMs, timedOut),
      });
    },
  };
}
