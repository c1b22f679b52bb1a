// Real HTTP servers on 127.0.0.1:0, one per way of mounting a middleware. Each request names the
// vector it carries (x-vector), so one server serves every vector with that vector's secret.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import Fastify from "fastify";
import { Hono } from "hono";
import type { DesklineEvent } from "../src/index.js";
import { fastifyWebhookPlugin } from "../src/middleware/fastify.js";
import { withWebhookVerification } from "../src/middleware/fetch.js";
import { type NodeWebhookRequest, nodeWebhookMiddleware } from "../src/middleware/node.js";
import type { WebhookMiddlewareOptions } from "../src/middleware/shared.js";

export interface Setup {
  secret: string | string[];
  options: WebhookMiddlewareOptions;
}
export type SetupOf = (req: IncomingMessage) => Setup;

export interface Listening {
  url: string;
  close: () => Promise<void>;
}

/** Listens on 127.0.0.1 (an ephemeral port), unless the server (a framework's) already does. */
export async function listen(server: Server): Promise<Listening> {
  if (!server.listening) {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function eventReply(event: DesklineEvent | undefined) {
  return { id: event?.id, type: event?.type };
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** node http, the middleware as the whole listener with a handler. */
export function nodeHandlerServer(setupOf: SetupOf): Server {
  return createServer((req, res) => {
    const { secret, options } = setupOf(req);
    void nodeWebhookMiddleware(secret, {
      ...options,
      handler: (event, _req, response) => sendJson(response, 200, eventReply(event)),
    })(req, res);
  });
}

/** Connect/Express style: the middleware, then `next` reads `req.webhookEvent`. */
export function nodeNextServer(setupOf: SetupOf, preRead?: "buffer-body" | "raw-body-string"): Server {
  return createServer(async (req: NodeWebhookRequest, res) => {
    const { secret, options } = setupOf(req);
    // What express.raw() (a Buffer req.body) or a custom parser (req.rawBody) leave behind.
    if (preRead === "buffer-body") req.body = await readAll(req);
    if (preRead === "raw-body-string") req.rawBody = (await readAll(req)).toString("utf8");
    await nodeWebhookMiddleware(secret, options)(req, res, (error?: unknown) => {
      if (error) sendJson(res, 500, { next: String(error) });
      else sendJson(res, 200, eventReply(req.webhookEvent));
    });
  });
}

/** A node http adapter around a fetch-style handler, as Deno/Bun/Workers would call it. */
export function fetchServer(setupOf: SetupOf): Server {
  return createServer(async (req, res) => {
    const { secret, options } = setupOf(req);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? null : bodyStream(req),
      duplex: "half",
    } as RequestInit);
    const handle = withWebhookVerification(secret, (event) => Response.json(eventReply(event)), options);
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
    // Like Deno and Bun, discard what the handler left unread (a 413 reads nothing), so the
    // keep-alive connection can carry the next request.
    req.removeAllListeners("data");
    req.resume();
  });
}

/**
 * The request body as a web stream. Unlike Readable.toWeb, a cancel drains and drops the rest
 * instead of destroying the socket, as Deno and Bun do, so the 413 reaches the client.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      req.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk));
        req.pause();
      });
      req.on("end", () => controller.close());
      req.on("error", (error) => controller.error(error));
      req.pause();
    },
    pull() {
      req.resume();
    },
    cancel() {
      for (const name of ["data", "end", "error"]) req.removeAllListeners(name);
      req.resume();
    },
  });
}

/**
 * The real Fastify, the plugin registered in one scope per setup: a plugin's options are fixed
 * when it is registered, so each vector (and each body cap the tests use) has a scope of its own,
 * and `rewriteUrl` sends a request to the scope its headers name.
 */
export async function fastifyServer(
  setups: { key: string; setup: Setup }[],
  keyOf: (req: IncomingMessage) => string,
): Promise<Listening> {
  const app = Fastify({ rewriteUrl: (req) => `/${keyOf(req)}` });
  for (const { key, setup } of setups) {
    await app.register(async (scope) => {
      await scope.register(fastifyWebhookPlugin, { secret: setup.secret, ...setup.options });
      scope.post(`/${key}`, async (request) => eventReply(request.webhookEvent));
    });
  }
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhooks`, close: () => app.close() };
}

/** The real Hono on @hono/node-server, the fetch middleware inside a route (the README's example). */
export async function honoServer(setupOf: SetupOf): Promise<Listening> {
  const app = new Hono<{ Bindings: { incoming: IncomingMessage } }>();
  app.post("/webhooks", (c) => {
    const { secret, options } = setupOf(c.env.incoming);
    return withWebhookVerification(secret, async (event) => c.json(eventReply(event)), options)(c.req.raw);
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  await once(server, "listening");
  return listen(server);
}
