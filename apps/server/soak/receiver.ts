import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@deskline/webhook-verifier";
import type { TestCertificate } from "../test/helpers/test-certificate.js";

/**
 * The crash trials' webhook receiver: HTTPS on 127.0.0.1 (the server only delivers to `https:`),
 * answering 200 to everything and counting what arrived by `Service-Delivery` (the event id), so
 * the audit can tell a lost delivery from a duplicate. Signatures are checked with the verifier
 * package once the endpoint's secret is known; a bad one is counted, never a reason to refuse.
 */
export interface CountingReceiver {
  url: string;
  /** Requests per event id. */
  counts: Map<string, number>;
  /** Requests in all, and those whose signature did not verify. */
  requests: () => number;
  badSignatures: () => number;
  /** The endpoint's secret, once the endpoint is created. */
  useSecret(secret: string): void;
  close(): Promise<void>;
}

export async function startCountingReceiver(certificate: TestCertificate): Promise<CountingReceiver> {
  const counts = new Map<string, number>();
  let requests = 0;
  let badSignatures = 0;
  let secret: string | undefined;
  const server = createServer(
    { cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        requests++;
        const eventId = String(req.headers["service-delivery"] ?? "");
        counts.set(eventId, (counts.get(eventId) ?? 0) + 1);
        if (secret) {
          try {
            verifySignature(Buffer.concat(chunks), String(req.headers["service-signature"]), secret);
          } catch {
            badSignatures++;
          }
        }
        res.writeHead(200).end("ok");
      });
    },
  );
  server.listen(0, "127.0.0.1");
  await new Promise<void>((done) => server.once("listening", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    counts,
    requests: () => requests,
    badSignatures: () => badSignatures,
    useSecret(value) {
      secret = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
