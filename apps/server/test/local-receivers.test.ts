import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@deskline/webhook-verifier";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { type Deployment, type InProcessServer, startDeployment } from "./helpers/delivery.js";
import { eventually } from "./helpers/main-process.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// Webhooks to a receiver on the developer's machine: where private networks are allowed (the
// development switch), an endpoint URL may be `http://` to loopback and deliveries go there in the
// clear; anywhere else `http://` is refused naming `url`, and production keeps `https:` only.

let strict: TestServer;
let strictKey: string;
let deployment: Deployment;
let dev: InProcessServer;
let devKey: string;

beforeAll(async () => {
  strict = await startTestServer({ mongodbUri: inject("mongodbUri") });
  ({ key: strictKey } = await newWorkspace(undefined, strict.baseUrl));
  deployment = await startDeployment();
  dev = await deployment.start("all");
  ({ key: devKey } = await newWorkspace(undefined, dev.baseUrl));
});
afterAll(() => strict.stop());

const create = (baseUrl: string, key: string, url: string) =>
  api.post("/open/v1/webhook-endpoints", { baseUrl, key, body: { url, events: ["contact.created"] } });

describe("http:// endpoint URLs", () => {
  it("are refused by a production server, naming `url` and the development switch", async () => {
    for (const url of ["http://127.0.0.1:4000/webhooks", "http://hooks.example.invalid/x"]) {
      const response = await create(strict.baseUrl, strictKey, url);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "parameter_invalid", param: "url" });
      expect(response.body.error.message).toContain("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true");
    }
  });

  it("are accepted by a development server to loopback only, on create and on update", async () => {
    for (const url of ["http://127.0.0.1:4000/webhooks", "http://localhost:4000/x", "http://[::1]:4000/x"]) {
      expect((await create(dev.baseUrl, devKey, url)).status).toBe(201);
    }
    const created = await create(dev.baseUrl, devKey, "https://hooks.example.invalid/x");
    const path = `/open/v1/webhook-endpoints/${created.body.id}`;
    for (const url of [
      "http://10.0.0.1/x",
      "http://hooks.example.invalid/x",
      "http://localhost.example.invalid/x",
    ]) {
      const refused = await api.patch(path, { baseUrl: dev.baseUrl, key: devKey, body: { url } });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "url" });
      expect(refused.body.error.message).toContain("only to this machine");
    }
    expect((await api.get(path, { baseUrl: dev.baseUrl, key: devKey })).body.url).toBe(
      "https://hooks.example.invalid/x",
    );
  });

  it("other schemes stay refused everywhere", async () => {
    for (const url of ["ftp://127.0.0.1/x", "ws://127.0.0.1/x", "HTTP://127.0.0.1/x"]) {
      const response = await create(dev.baseUrl, devKey, url);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ param: "url" });
    }
  });

  it("a development server delivers to an http://127.0.0.1 receiver, signed", async () => {
    const bodies: { body: string; signature: string }[] = [];
    const receiver: Server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      request.on("end", () => {
        bodies.push({ body, signature: String(request.headers["service-signature"]) });
        response.end("ok");
      });
    }).listen(0, "127.0.0.1");
    await once(receiver, "listening");
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
      const endpoint = await create(dev.baseUrl, devKey, url);
      expect(endpoint.status).toBe(201);
      const contact = await api.post("/open/v1/contacts", {
        baseUrl: dev.baseUrl,
        key: devKey,
        body: { name: "Local" },
      });
      const [delivered] = await eventually(
        async () => bodies,
        (got) => got.length > 0,
        "a delivery to the local receiver",
      );
      expect(JSON.parse(delivered?.body as string)).toMatchObject({
        type: "contact.created",
        data: { id: contact.body.id },
      });
      expect(() =>
        verifySignature(delivered?.body as string, delivered?.signature as string, endpoint.body.secret),
      ).not.toThrow();
    } finally {
      receiver.close();
    }
  });
});
