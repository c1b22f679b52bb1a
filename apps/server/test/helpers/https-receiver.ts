import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { atFileEnd } from "./file-end.js";
import { testCertificate } from "./test-certificate.js";

export { type TestCertificate, testCertificate } from "./test-certificate.js";

/**
 * Webhook receivers for the delivery tests: real HTTPS servers on 127.0.0.1 with a self-signed
 * certificate (./test-certificate.ts), which the delivering server process trusts through
 * NODE_EXTRA_CA_CERTS. Each records what it received, with when each request started and ended
 * and how many were in flight (what a fault test reads its guarantees from,
 * ./delivery-history.ts); a test decides what it answers.
 */

export interface ReceivedDelivery {
  /** The request's path (and query), as the request line had it. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as bytes arrived. */
  body: Buffer;
  /** When the body had arrived (the answer is decided then). */
  receivedAt: number;
  /** When the request's headers arrived: its start, for the counts of what was in flight. */
  startedAt: number;
  /** When it was answered or its connection closed; undefined while it is in flight. */
  endedAt?: number;
  /** The event it delivers (`Service-Delivery`). */
  eventId: string;
  /** The requests in flight when this one started, this one included. */
  inFlightAtStart: number;
  /** The status answered; undefined while in flight, or when the sender went away first. */
  status?: number;
  /** The TLS server name (SNI) the sender asked for; false when it sent none. */
  servername: string | false;
  /** The sender's end of the connection: its port tells which connection (a proxy's, or the sender's own). */
  remotePort: number | undefined;
}

/** How to answer one request: a status (and headers), after an optional delay; or never. */
export type Answer =
  | { status: number; headers?: Record<string, string>; delayMs?: number; body?: string | Buffer }
  | "hang";

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** Decides each answer (default: 200); `received` already holds the request. */
  answer: (delivery: ReceivedDelivery, index: number) => Answer;
  /** Requests whose `service-delivery` is `eventId`. */
  deliveriesOf(eventId: string): ReceivedDelivery[];
  /**
   * The requests started and neither answered nor abandoned, in the order they started (a request
   * counts from its headers, so one whose body is still coming counts too).
   */
  inFlight(): ReceivedDelivery[];
  /** Answers every request left hanging, with 200 unless told. */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hooks"): Promise<Receiver> {
  const { certFile, keyFile } = testCertificate();
  const hanging: ServerResponse[] = [];
  const open = new Set<ReceivedDelivery>();
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    answer: () => ({ status: 200 }),
    deliveriesOf: (eventId) => receiver.received.filter((r) => r.headers["service-delivery"] === eventId),
    inFlight: () => [...open],
    release(status = 200) {
      for (const res of hanging.splice(0)) if (!res.writableEnded) res.writeHead(status).end("ok");
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    const delivery: ReceivedDelivery = {
      path: req.url ?? "",
      headers: req.headers,
      body: Buffer.alloc(0),
      receivedAt: 0,
      startedAt: Date.now(),
      eventId: String(req.headers["service-delivery"] ?? ""),
      inFlightAtStart: open.size + 1,
      servername: (req.socket as TLSSocket).servername || false,
      remotePort: req.socket.remotePort,
    };
    open.add(delivery);
    // Answered, or the sender went away (a timeout, a killed process): no longer in flight.
    res.once("close", () => {
      delivery.endedAt = Date.now();
      if (res.writableFinished) delivery.status = res.statusCode;
      open.delete(delivery);
    });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      delivery.body = Buffer.concat(chunks);
      delivery.receivedAt = Date.now();
      receiver.received.push(delivery);
      const answer = receiver.answer(delivery, receiver.received.length - 1);
      if (answer === "hang") {
        hanging.push(res);
        return;
      }
      const send = () => {
        if (!res.destroyed) res.writeHead(answer.status, answer.headers).end(answer.body ?? "received");
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  atFileEnd(() => receiver.close());
  server.listen(0, "127.0.0.1");
  await new Promise<void>((done) => server.once("listening", done));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://127.0.0.1:${receiver.port}${path}`;
  return receiver;
}
