import { createServer, type Server } from "node:http";
// Koa is a dev dependency only (the package has no runtime dependencies): the suites below run
// the real Koa, never a stand-in.
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signPayload } from "../src/index.js";
import { withWebhookVerification } from "../src/middleware/fetch.js";
import { koaWebhookMiddleware } from "../src/middleware/koa.js";
import type { Listening, Setup, SetupOf } from "./servers.js";
import {
  eventReply,
  fastifyServer,
  fetchServer,
  honoServer,
  listen,
  nodeHandlerServer,
  nodeNextServer,
  readAll,
} from "./servers.js";
import { eventError, eventText, NOW, optionsOf, payloadBytes, vectors } from "./vectors.js";

const setupOf: SetupOf = (req) => {
  const v = vectors[Number(req.headers["x-vector"] ?? -1)];
  if (!v)
    return {
      secret: "whsec_test",
      options: { now: NOW, maxBodyBytes: Number(req.headers["x-max"] ?? 1024 * 1024) },
    };
  return { secret: v.secret, options: optionsOf(v) };
};

function koaServer(mode: "next" | "handler" | "raw-body-string"): Server {
  const app = new Koa();
  if (mode === "raw-body-string") {
    // What koa-bodyparser leaves: the stream consumed, the text on ctx.request.rawBody.
    app.use(async (ctx, next) => {
      (ctx.request as { rawBody?: string }).rawBody = (await readAll(ctx.req)).toString("utf8");
      await next();
    });
  }
  app.use(async (ctx, next) => {
    const { secret, options } = setupOf(ctx.req);
    const mw = koaWebhookMiddleware(
      secret,
      mode === "handler"
        ? {
            ...options,
            handler: (event, c) => {
              c.state.handled = event.id;
            },
          }
        : options,
    );
    await mw(ctx, next);
    if (mode === "handler" && ctx.status === 200)
      ctx.body = { id: ctx.state.handled, type: ctx.state.webhookEvent.type, received: ctx.body };
  });
  app.use((ctx) => {
    ctx.body = eventReply(ctx.state.webhookEvent);
  });
  return createServer(app.callback());
}

/** `stringRawBody`: a body parser ran first and kept the body only as decoded text. */
/** The setups `setupOf` can give, one per vector and per body cap the tests below ask for. */
const CAPS = [63, 64, 1024 * 1024];
const fastifySetups: { key: string; setup: Setup }[] = [
  ...vectors.map((v, i) => ({ key: `vector-${i}`, setup: { secret: v.secret, options: optionsOf(v) } })),
  ...CAPS.map((max) => ({
    key: `max-${max}`,
    setup: { secret: "whsec_test", options: { now: NOW, maxBodyBytes: max } },
  })),
];
const fastifyKey = (req: { headers: Record<string, unknown> }) =>
  req.headers["x-vector"] === undefined
    ? `max-${req.headers["x-max"] ?? 1024 * 1024}`
    : `vector-${req.headers["x-vector"]}`;

const kinds: { name: string; make: () => Server | Promise<Listening>; stringRawBody?: boolean }[] = [
  { name: "node http listener with handler", make: () => nodeHandlerServer(setupOf) },
  { name: "connect/express style with next", make: () => nodeNextServer(setupOf) },
  { name: "express.raw() Buffer req.body", make: () => nodeNextServer(setupOf, "buffer-body") },
  {
    name: "req.rawBody string",
    make: () => nodeNextServer(setupOf, "raw-body-string"),
    stringRawBody: true,
  },
  { name: "fetch handler behind an http adapter", make: () => fetchServer(setupOf) },
  { name: "fetch handler in Hono on @hono/node-server", make: () => honoServer(setupOf) },
  { name: "fastify plugin", make: () => fastifyServer(fastifySetups, fastifyKey) },
  { name: "koa with next", make: () => koaServer("next") },
  { name: "koa with handler option", make: () => koaServer("handler") },
  {
    name: "koa after a body parser (ctx.request.rawBody)",
    make: () => koaServer("raw-body-string"),
    stringRawBody: true,
  },
];

describe.each(kinds)("$name", ({ make, stringRawBody }) => {
  let server: Listening;
  beforeAll(async () => {
    const made = await make();
    server = "url" in made ? made : await listen(made);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(vectors.map((v, i) => ({ ...v, i })))("vector: $name", async (v) => {
    const headers: Record<string, string> = { "content-type": "application/json", "x-vector": String(v.i) };
    if (v.header !== null) headers["Service-Signature"] = v.header;
    const res = await fetch(server.url, { method: "POST", headers, body: payloadBytes(v.payload) });
    const body = (await res.json()) as {
      error?: { type: string; code: string; message: string };
      type?: string;
    };
    // Bytes that are not UTF-8 do not survive a parser that keeps the body as text (each becomes
    // U+FFFD), so the signed bytes are gone: what a receiver with such a parser really gets.
    const code = v.bytesOnly && stringRawBody ? "signature_mismatch" : eventError(v);
    if (code === undefined) {
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.type).toBe((v.event as { type: string }).type);
    } else {
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(body.error).toMatchObject({ type: "webhook_verification_error", code });
      expect(body.error?.message).toEqual(expect.any(String));
    }
  });

  it("answers 413 to a declared body over 1 MiB without reading it", async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, "a");
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "service-signature": signPayload(big, "whsec_test", { timestamp: NOW }) },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("answers 413 to a chunked body over maxBodyBytes, and the 1 MiB limit is inclusive", async () => {
    const body = "x".repeat(64);
    const header = signPayload(body, "whsec_test", { timestamp: NOW });
    const chunked = (max: number) =>
      fetch(server.url, {
        method: "POST",
        headers: { "service-signature": header, "x-max": String(max) },
        body: new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(body.slice(0, 32)));
            c.enqueue(new TextEncoder().encode(body.slice(32)));
            c.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
    const over = await chunked(63);
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { code: "payload_too_large" } });
    const exact = await chunked(64);
    // Exactly at the cap the body is read and verified: not an event, so invalid_payload.
    expect(exact.status).toBe(400);
    expect(await exact.json()).toMatchObject({ error: { code: "invalid_payload" } });
  });
});

describe("fetch handler, called directly", () => {
  const body = eventText("evt_direct", "conversation.assigned", {
    id: "conv_1",
    object: "conversation",
    assignees: [],
  });

  it("reads the header case-insensitively and passes extra arguments through", async () => {
    const handle = withWebhookVerification(
      ["whsec_old", "whsec_new"],
      (e, _request, env: { name: string }) => Response.json({ id: e.id, env: env.name }),
      { now: NOW },
    );
    const request = new Request("http://x/hook", {
      method: "POST",
      headers: { "SERVICE-SIGNATURE": signPayload(body, "whsec_new", { timestamp: NOW }) },
      body,
    });
    const res = await handle(request, { name: "worker" });
    expect(await res.json()).toEqual({ id: "evt_direct", env: "worker" });
  });

  it("does not call the handler when verification fails", async () => {
    let called = false;
    const handle = withWebhookVerification("whsec_x", () => {
      called = true;
      return new Response(null);
    });
    const res = await handle(new Request("http://x/hook", { method: "POST", body }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "missing_header" } });
    expect(called).toBe(false);
  });
});

describe("node middleware errors that are not verification failures", () => {
  it("hands a consumed body with no raw copy to next(error)", async () => {
    const { nodeWebhookMiddleware } = await import("../src/middleware/node.js");
    const server = await listen(
      createServer(async (req, res) => {
        await readAll(req); // a JSON parser ran and kept only the parsed object
        (req as { body?: unknown }).body = {};
        await nodeWebhookMiddleware("whsec_x")(req, res, (error) => {
          res.writeHead(500).end(String(error));
        });
      }),
    );
    try {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "service-signature": "t=1,v1=00" },
        body: "{}",
      });
      expect(res.status).toBe(500);
      expect(await res.text()).toContain("express.raw");
    } finally {
      await server.close();
    }
  });

  it("answers 500 and reports through onError when a handler throws and there is no next", async () => {
    const { nodeWebhookMiddleware } = await import("../src/middleware/node.js");
    const reported: unknown[] = [];
    const server = await listen(
      createServer(
        nodeWebhookMiddleware("whsec_x", {
          now: NOW,
          handler: () => {
            throw new Error("boom");
          },
          onError: (error) => reported.push(error),
        }),
      ),
    );
    try {
      const body = eventText(
        "evt_1",
        "contact.updated",
        { id: "con_1", object: "contact" },
        { previous_attributes: { name: "A" } },
      );
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "service-signature": signPayload(body, "whsec_x", { timestamp: NOW }) },
        body,
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ error: { type: "api_error" } });
      expect(String(reported[0])).toContain("boom");
    } finally {
      await server.close();
    }
  });
});

describe("fastify plugin scope", () => {
  const body = eventText("evt_fastify", "contact.created", { id: "con_1", object: "contact", name: "Ada" });
  let server: Listening;
  beforeAll(async () => {
    const { default: Fastify } = await import("fastify");
    const { fastifyWebhookPlugin } = await import("../src/middleware/fastify.js");
    const app = Fastify();
    // A route outside the plugin's scope keeps Fastify's own JSON parser and is not verified.
    app.post("/other", async (request) => ({ parsed: request.body, event: request.webhookEvent }));
    await app.register(async (webhooks) => {
      await webhooks.register(fastifyWebhookPlugin, { secret: ["whsec_old", "whsec_new"], now: NOW });
      webhooks.post("/webhooks", async (request) => ({
        // Typed by the module augmentation: no cast.
        id: request.webhookEvent.id,
        name:
          request.webhookEvent.type === "contact.created" && "name" in request.webhookEvent.data
            ? request.webhookEvent.data.name
            : null,
        rawBody: Buffer.isBuffer(request.body) ? (request.body as Buffer).toString("utf8") : null,
      }));
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as { port: number };
    server = { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The event posted to the plugin's scope as `contentType`, signed with `secret`. */
  const deliver = (contentType: string, secret: string) =>
    fetch(`${server.url}/webhooks`, {
      method: "POST",
      headers: {
        "content-type": contentType,
        "service-signature": signPayload(body, secret, { timestamp: NOW }),
      },
      body,
    });

  it("verifies routes in its scope on the raw bytes, with any of several secrets", async () => {
    const res = await deliver("application/json", "whsec_new");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "evt_fastify", name: "Ada", rawBody: body });
  });

  it("answers a forged delivery as the other middlewares do, before the handler", async () => {
    const res = await deliver("text/plain", "whsec_other");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({
      error: { type: "webhook_verification_error", code: "signature_mismatch" },
    });
  });

  it("leaves routes outside its scope alone: parsed JSON, no verification", async () => {
    const res = await fetch(`${server.url}/other`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    // No webhookEvent there: the plugin decorates only the requests of its scope.
    expect(await res.json()).toEqual({ parsed: { a: 1 } });
  });
});

describe("fastify plugin registered on the root instance", () => {
  it("verifies every route of the app, as documented", async () => {
    const { default: Fastify } = await import("fastify");
    const { fastifyWebhookPlugin } = await import("../src/middleware/fastify.js");
    const app = Fastify();
    app.register(fastifyWebhookPlugin, { secret: "whsec_root", now: NOW });
    app.post("/hook", async (request) => ({ type: request.webhookEvent.type }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const { port } = app.server.address() as { port: number };
      const body = eventText("evt_root", "ticket.created", { id: "tkt_1", object: "ticket" });
      const post = (signature: string | undefined) =>
        fetch(`http://127.0.0.1:${port}/hook`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(signature ? { "service-signature": signature } : {}),
          },
          body,
        });
      const ok = await post(signPayload(body, "whsec_root", { timestamp: NOW }));
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ type: "ticket.created" });
      const unsigned = await post(undefined);
      expect(unsigned.status).toBe(400);
      expect(await unsigned.json()).toMatchObject({ error: { code: "missing_header" } });
    } finally {
      await app.close();
    }
  });
});
