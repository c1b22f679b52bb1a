import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import type { Config } from "../../src/config.js";
import { DatabaseConnection } from "../../src/platform/database/client.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { trustedCertificates } from "../../src/webhooks/delivery/http-client.js";
import type { WebhookDelivery } from "../../src/webhooks/delivery/worker.js";
import { atScopeEnd } from "./file-end.js";
import { testCertificate } from "./test-certificate.js";

/**
 * A whole server (`startServer`, the composition main runs) in the test's own process, on
 * loopback, with what it logs kept for assertions: what a test starts instead of a `src/main.ts`
 * process, which costs seconds of CPU to start. Whatever a file starts stops after its tests.
 */

/** A server running in the test's process, with what it logged (at `info`) kept for assertions. */
export interface InProcessServer {
  baseUrl: string;
  server: RunningServer;
  delivery: WebhookDelivery;
  /** Everything it logged so far, one JSON line each. */
  output: () => string;
  /** Resolves once the log matches `pattern`. */
  logged: (pattern: RegExp) => Promise<void>;
  /** A graceful stop, as SIGTERM gives a process (running attempts finish, up to `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts `startServer` on loopback with `config` (e.g. `loadConfig(env)`), logging at `info`
 * into memory, trusting the receivers' certificate as a process does through
 * NODE_EXTRA_CA_CERTS; resolves once it delivers (workers) or queues (api). It stops at the end
 * of the test that starts it (of the file, started outside a test), or where `atEnd` says.
 */
export async function startInProcess(
  config: Config,
  atEnd: (stop: () => Promise<void>) => void = atScopeEnd,
): Promise<InProcessServer> {
  const log = capturedLog();
  const server = await startServer(config, {
    database: new DatabaseConnection(config.mongodbUri as string, config.databaseName),
    logger: pino({ level: "info", base: { service: "deskline-server" } }, log.stream),
    listen: { host: "127.0.0.1", port: 0 },
    ca: testServersCa(),
    // Node's process metrics are the test process's, not a server's.
    processMetrics: false,
  });
  const delivery = await server.deliveryReady;
  let stopped: Promise<void> | undefined;
  const running: InProcessServer = {
    baseUrl: server.baseUrl,
    server,
    delivery,
    output: log.output,
    logged: log.logged,
    stop(timeoutMs = config.shutdownTimeoutMs) {
      stopped ??= server.stop(timeoutMs);
      return stopped;
    },
  };
  // A server left with a hanging attempt must not hold its test's or file's end: its stop is bounded.
  atEnd(() => running.stop(1_000));
  return running;
}

let trusted: string[] | undefined;

/**
 * What every in-process server trusts: the system's certificates and the receivers'. Read once per
 * worker, not at each of the hundred-odd starts of a run.
 */
function testServersCa(): string[] {
  trusted ??= [...trustedCertificates(undefined), readFileSync(testCertificate().certFile, "utf8")];
  return trusted;
}

/** A log kept in memory, and a way to wait for a line. */
function capturedLog() {
  let output = "";
  const waiting: { pattern: RegExp; done: () => void }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, next) {
      output += chunk.toString();
      for (const w of waiting.filter((w) => w.pattern.test(output))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.done();
      }
      next();
    },
  });
  const logged = (pattern: RegExp) =>
    new Promise<void>((done) => {
      if (pattern.test(output)) done();
      else waiting.push({ pattern, done });
    });
  return { stream, output: () => output, logged };
}
