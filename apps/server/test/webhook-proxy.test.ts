import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { createDeliveryAgent, postWebhook, type Resolver } from "../src/webhooks/delivery/http-client.js";
import { ADDRESS_REFUSED } from "../src/webhooks/delivery/outcome.js";
import { bypassesProxy, parseNoProxy, parseProxyUrl } from "../src/webhooks/egress-proxy.js";
import { api, newWorkspace } from "./helpers/api.js";
import { type ConnectProxy, startConnectProxy, withCredentials } from "./helpers/connect-proxy.js";
import { createEndpoint, type InProcessServer, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver, testCertificate } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Deliveries through an egress proxy (WEBHOOK_PROXY_URL): a CONNECT proxy and HTTPS receivers
// this file starts on 127.0.0.1, servers (ROLE=all, in this process) that deliver through the
// proxy. What the proxy is asked for is what the worker resolved and checked, an IP address and
// port, never a name; the receiver still sees its host name in SNI and `Host`; an address the
// policy refuses never reaches the proxy.

vi.setConfig({ testTimeout: 120_000 });
const SLOW = 60_000;
const PASSWORD = "pa55-w0rd:with@odd/chars";
const USER = "deliverer";

type Attempt = { event_id: string; attempt: number; error: string | null; succeeded: boolean };

/** A ROLE=all server of its own database delivering through `proxyUrl`, and a workspace's key. */
async function serverThrough(proxyUrl: string, env: Record<string, string> = {}) {
  const deployment = await startDeployment({ WEBHOOK_PROXY_URL: proxyUrl, ...env });
  const server = await deployment.start("all");
  const { key, workspaceId } = await newWorkspace(undefined, server.baseUrl);
  const endpointAt = (url: string) => createEndpoint({ key, baseUrl: server.baseUrl }, url);
  const emit = () => deployment.emit(workspaceId, "contact.created");
  const attemptsOf = async (endpointId: string) => {
    const path = `/open/v1/webhook-endpoints/${endpointId}/attempts?limit=100`;
    return (await api.get(path, { key, baseUrl: server.baseUrl })).body.data as Attempt[];
  };
  return { server, endpointAt, emit, attemptsOf };
}

const deliveredTo = (receiver: Receiver, count: number) =>
  eventually(
    async () => receiver.received.length,
    (n) => n >= count,
    `${count} deliveries`,
    SLOW,
  );

/** Every delivery came in on a connection the proxy opened (its port is one of the proxy's). */
function allThrough(receiver: Receiver, proxy: ConnectProxy): void {
  for (const delivery of receiver.received) expect(proxy.upstreamPorts).toContain(delivery.remotePort);
}

describe("deliveries through a CONNECT proxy", () => {
  it("go through it to the address the worker resolved, with the host's SNI and Host; the password is in no log", async () => {
    const proxy = await startConnectProxy({ credentials: `${USER}:${PASSWORD}` });
    const receiver = await startReceiver();
    const through = await serverThrough(withCredentials(proxy.url, USER, PASSWORD));
    const endpoint = await through.endpointAt(`https://localhost:${receiver.port}/hooks`);
    for (let i = 0; i < 5; i++) await through.emit();
    await deliveredTo(receiver, 5);
    const attempts = await through.attemptsOf(endpoint.id);
    expect(attempts.every((a) => a.succeeded)).toBe(true);
    // The proxy was asked for the checked address, never for the name it would resolve itself.
    expect(proxy.connects.length).toBeGreaterThanOrEqual(1);
    for (const connect of proxy.connects) expect(connect.target).toBe(`127.0.0.1:${receiver.port}`);
    const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;
    expect(proxy.connects.every((c) => c.authorization === basic)).toBe(true);
    allThrough(receiver, proxy);
    for (const delivery of receiver.received) {
      expect(delivery.headers.host).toBe(`localhost:${receiver.port}`);
      expect(delivery.servername).toBe("localhost");
    }
    expect(through.server.output()).toContain(`"egressProxy":"http://***@127.0.0.1:${proxy.port}"`);
    expect(through.server.output()).not.toContain(PASSWORD);
    expect(through.server.output()).not.toContain(encodeURIComponent(PASSWORD));
  });

  it("a 407 from the proxy fails the attempt, and the attempts log says why", async () => {
    const proxy = await startConnectProxy({ credentials: `${USER}:${PASSWORD}` });
    const receiver = await startReceiver();
    const through = await serverThrough(withCredentials(proxy.url, USER, "wrong"), {
      WEBHOOK_RETRY_DELAYS: "50ms",
    });
    const endpoint = await through.endpointAt(`https://localhost:${receiver.port}/hooks`);
    await through.emit();
    const attempts = await eventually(
      () => through.attemptsOf(endpoint.id),
      (found) => found.length >= 2,
      "2 attempts",
      SLOW,
    );
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({
        succeeded: false,
        error: "proxy refused CONNECT: 407 Proxy Authentication Required",
      });
    }
    expect(receiver.received).toHaveLength(0);
    expect(proxy.connects.length).toBe(2);
  });

  it("WEBHOOK_NO_PROXY's hosts connect directly, the others still through the proxy", async () => {
    const proxy = await startConnectProxy();
    const receiver = await startReceiver();
    const through = await serverThrough(proxy.url, { WEBHOOK_NO_PROXY: "localhost, .example.invalid" });
    await through.endpointAt(`https://localhost:${receiver.port}/direct`);
    await through.emit();
    await deliveredTo(receiver, 1);
    expect(proxy.connects).toHaveLength(0);
    expect(proxy.upstreamPorts).not.toContain(receiver.received[0]?.remotePort);
    // The same receiver by its address: not exempt, so through the proxy.
    await through.endpointAt(`https://127.0.0.1:${receiver.port}/proxied`);
    await through.emit();
    await deliveredTo(receiver, 3);
    const proxied = receiver.received.filter((delivery) => delivery.path === "/proxied");
    expect(proxied).toHaveLength(1);
    expect(proxy.connects.map((c) => c.target)).toEqual([`127.0.0.1:${receiver.port}`]);
    expect(proxy.upstreamPorts).toContain(proxied[0]?.remotePort);
  });
});

/**
 * The agent alone, the policy on: a resolver this test controls maps names to addresses, and a
 * proxy that tunnels every CONNECT to the loopback receiver stands in for the internet, so a
 * public address is "reached" without a packet leaving the machine.
 */
// Any globally routable address: the proxy below sends its tunnel to the receiver instead.
const PUBLIC = "93.184.215.14";
const resolve: Resolver = (hostname, _options, callback) => {
  const address = { localhost: PUBLIC, "inside.hooks.test": "10.1.2.3" }[hostname];
  if (!address) return callback(Object.assign(new Error(hostname), { code: "ENOTFOUND" }), []);
  callback(null, [{ address, family: 4 }]);
};
const agentThrough = (proxy: ConnectProxy, url = proxy.url) =>
  createDeliveryAgent({
    allowPrivateNetworks: false,
    ca: [readFileSync(testCertificate().certFile, "utf8")],
    connections: null,
    resolve,
    egress: { proxy: parseProxyUrl(url), noProxy: [] },
  });

describe("the address policy, with the proxy: refused before any CONNECT", () => {
  it("an address the policy refuses is refused before the proxy is asked (0 CONNECTs)", async () => {
    const proxy = await startConnectProxy();
    const receiver = await startReceiver();
    const through = await serverThrough(proxy.url, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" });
    // A host name is taken at create (checked at connect); `localhost` resolves to loopback.
    const endpoint = await through.endpointAt(`https://localhost:${receiver.port}/hooks`);
    await through.emit();
    const [attempt] = await eventually(
      () => through.attemptsOf(endpoint.id),
      (found) => found.length >= 1,
      "an attempt",
      SLOW,
    );
    expect(attempt).toMatchObject({ succeeded: false, error: ADDRESS_REFUSED });
    expect(proxy.connects).toHaveLength(0);
    expect(receiver.received).toHaveLength(0);
    await (through.server as InProcessServer).logged(/webhook delivery refused/);
  });

  it.each([false, true])(
    "a public address goes through the proxy (on loopback, itself allowed) as CONNECT <address>:<port>; https proxy: %s",
    async (tls) => {
      const receiver = await startReceiver();
      const route = () => ({ host: "127.0.0.1", port: receiver.port });
      const proxy = await startConnectProxy({ tls, route });
      const agent = agentThrough(proxy);
      try {
        const result = await postWebhook(agent, `https://localhost:${receiver.port}/x`, "{}", {}, 10_000);
        expect(result).toMatchObject({ kind: "response", statusCode: 200 });
        expect(proxy.connects.map((c) => c.target)).toEqual([`${PUBLIC}:${receiver.port}`]);
        expect(receiver.received[0]?.servername).toBe("localhost");
        expect(receiver.received[0]?.headers.host).toBe(`localhost:${receiver.port}`);
      } finally {
        await agent.close();
      }
    },
  );
});

describe("the address policy, with the proxy: addresses inside, and a proxy away", () => {
  it("a name resolving inside, and an IP literal inside, never reach the proxy", async () => {
    const proxy = await startConnectProxy({ route: () => undefined });
    const agent = agentThrough(proxy);
    try {
      const byName = await postWebhook(agent, "https://inside.hooks.test/x", "{}", {}, 5_000);
      expect(byName).toEqual({
        kind: "address_refused",
        reason: "inside.hooks.test resolves to 10.1.2.3 is private",
      });
      const literal = await postWebhook(agent, "https://[::1]:8443/x", "{}", {}, 5_000);
      expect(literal).toEqual({ kind: "address_refused", reason: "::1 is loopback" });
      expect(proxy.connects).toHaveLength(0);
    } finally {
      await agent.close();
    }
  });

  it("a proxy that cannot be reached fails the attempt, saying so", async () => {
    const proxy = await startConnectProxy();
    await proxy.close();
    const agent = agentThrough(proxy);
    try {
      const result = await postWebhook(agent, "https://localhost/x", "{}", {}, 5_000);
      expect(result).toEqual({
        kind: "network_error",
        code: undefined,
        message: "proxy unreachable: ECONNREFUSED",
      });
    } finally {
      await agent.close();
    }
  });
});

describe("WEBHOOK_PROXY_URL and WEBHOOK_NO_PROXY", () => {
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig(env).webhookEgress;
    } catch (error) {
      return (error as Error).message;
    }
    return "no error";
  };

  it("are refused at start when malformed, without quoting the password", () => {
    const ftp = configError({ WEBHOOK_PROXY_URL: `ftp://${USER}:secret@proxy.invalid:2121` });
    expect(ftp).toBe(
      'WEBHOOK_PROXY_URL: must be an http:// or https:// URL of a proxy, got "ftp://***@proxy.invalid:2121/"',
    );
    const path = configError({ WEBHOOK_PROXY_URL: `http://${USER}:secret@proxy.invalid:3128/path` });
    expect(path).toContain("no path or query");
    expect(path).not.toContain("secret");
    expect(configError({ WEBHOOK_PROXY_URL: "http://" })).toBe('WEBHOOK_PROXY_URL: "http://" is not a URL');
    // Without a scheme the host reads as one.
    expect(configError({ WEBHOOK_PROXY_URL: "proxy.invalid:3128" })).toContain(
      "must be an http:// or https://",
    );
    expect(
      configError({ WEBHOOK_PROXY_URL: "http://proxy.invalid:3128", WEBHOOK_NO_PROXY: "*.example.com" }),
    ).toBe('WEBHOOK_NO_PROXY: "*.example.com": write .example.com for a domain');
    expect(
      configError({ WEBHOOK_PROXY_URL: "http://proxy.invalid:3128", WEBHOOK_NO_PROXY: "a.example.com:443" }),
    ).toContain("without scheme, port or path");
    expect(configError({ WEBHOOK_NO_PROXY: "localhost" })).toBe(
      "WEBHOOK_NO_PROXY needs WEBHOOK_PROXY_URL: it names the receivers reached without the proxy",
    );
  });

  it("exempt a .domain and the names under it, one host alone, or every host", () => {
    const rules = parseNoProxy(".example.com, hooks.example.org, ::1");
    for (const host of [
      "example.com",
      "a.example.com",
      "A.B.EXAMPLE.COM.",
      "hooks.example.org",
      "[::1]",
      "[0:0::1]",
    ]) {
      expect(bypassesProxy(rules, host), host).toBe(true);
    }
    for (const host of [
      "badexample.com",
      "example.com.evil.invalid",
      "a.hooks.example.org",
      "example.org",
      "127.0.0.1",
    ]) {
      expect(bypassesProxy(rules, host), host).toBe(false);
    }
    expect(bypassesProxy(parseNoProxy("*"), "anything.invalid")).toBe(true);
    expect(bypassesProxy(parseNoProxy(""), "anything.invalid")).toBe(false);
  });

  it("read the proxy and the exemptions; the proxy prints without its password", () => {
    const { webhookEgress } = loadConfig({
      WEBHOOK_PROXY_URL: `https://${USER}:${encodeURIComponent(PASSWORD)}@proxy.invalid`,
      WEBHOOK_NO_PROXY: "*, .Example.COM, hooks.example.invalid, [::1], 10.0.0.1",
    });
    expect(webhookEgress?.noProxy).toEqual([
      { all: true },
      { domain: "example.com" },
      { host: "hooks.example.invalid" },
      { host: "::1" },
      { host: "10.0.0.1" },
    ]);
    const proxy = webhookEgress?.proxy;
    expect(proxy?.authorization).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`);
    expect(String(proxy)).toBe("https://***@proxy.invalid:443");
    expect(JSON.stringify({ proxy })).toBe('{"proxy":"https://***@proxy.invalid:443"}');
    expect(loadConfig({}).webhookEgress).toBeUndefined();
  });
});
