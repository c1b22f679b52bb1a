// A webhook receiver as a Deskline user writes one: an HTTPS server whose handler is
// `@deskline/webhook-verifier`'s node (Express/Connect) middleware, imported from the built
// package. It keeps every delivery the middleware verified, and counts the ones it refused.
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { DesklineEvent } from "@deskline/webhook-verifier";
import { nodeWebhookMiddleware } from "@deskline/webhook-verifier/node";

export interface VerifiedDelivery {
  /** The `Service-Delivery` header: the event id, the same on every retry. */
  deliveryId: string;
  event: DesklineEvent;
}

export interface VerifiedReceiver {
  url: string;
  /** Verification starts once the endpoint's secret is known; until then every delivery is refused. */
  useSecret(secret: string): void;
  verified: VerifiedDelivery[];
  /** Deliveries the middleware refused (status 4xx). */
  refused: number;
  /**
   * While true, deliveries are held unanswered (their sender is mid-delivery) until it is set
   * false again; `held` counts those waiting whose sender has not hung up.
   */
  hold: boolean;
  held: number;
  /** Each delivery is answered this long after it arrived (a receiver with some work to do). */
  delayMs: number;
  close(): Promise<void>;
}

export async function startVerifiedReceiver(
  certificate: { certFile: string; keyFile: string },
  path = "/hooks/deskline",
): Promise<VerifiedReceiver> {
  let verify: ReturnType<typeof nodeWebhookMiddleware> | undefined;
  const receiver: VerifiedReceiver = {
    url: "",
    useSecret(secret) {
      verify = nodeWebhookMiddleware(secret, {
        handler: (event, req) => {
          receiver.verified.push({ deliveryId: String(req.headers["service-delivery"]), event });
        },
      });
    },
    verified: [],
    refused: 0,
    hold: false,
    held: 0,
    delayMs: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server: Server = createServer(
    { cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) },
    (req, res) => {
      res.once("finish", () => {
        if (res.statusCode >= 400) receiver.refused++;
      });
      if (!verify || req.method !== "POST" || req.url !== path) {
        res.writeHead(404).end();
        return;
      }
      void answer(req, res);
    },
  );
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    if (receiver.hold) {
      // Counted while its sender still waits: one that timed out and hung up is mid-delivery no more.
      let hungUp = false;
      res.once("close", () => {
        hungUp = true;
      });
      receiver.held++;
      while (receiver.hold && !hungUp) await new Promise((done) => setTimeout(done, 20));
      receiver.held--;
      if (hungUp) return;
    }
    if (receiver.delayMs > 0) await new Promise((done) => setTimeout(done, receiver.delayMs));
    await verify?.(req, res);
  };
  server.listen(0, "127.0.0.1");
  await new Promise<void>((done) => server.once("listening", done));
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}

/** Verified deliveries grouped by event id: each event once, with how many times it came. */
export function byEventId(
  deliveries: VerifiedDelivery[],
): Map<string, { event: DesklineEvent; count: number }> {
  const events = new Map<string, { event: DesklineEvent; count: number }>();
  for (const { deliveryId, event } of deliveries) {
    if (deliveryId !== event.id)
      throw new Error(`Service-Delivery ${deliveryId} names another event than ${event.id}`);
    const seen = events.get(event.id);
    if (seen && JSON.stringify(seen.event) !== JSON.stringify(event))
      throw new Error(`two deliveries of ${event.id} carry different payloads`);
    events.set(event.id, { event, count: (seen?.count ?? 0) + 1 });
  }
  return events;
}
