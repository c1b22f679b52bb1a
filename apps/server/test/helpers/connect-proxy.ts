import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { atFileEnd } from "./file-end.js";
import { testCertificate } from "./test-certificate.js";

/**
 * A forward proxy on 127.0.0.1 that speaks HTTP CONNECT, as a fixed-egress proxy does: for the
 * tests and the bench of deliveries through WEBHOOK_PROXY_URL. It notes every CONNECT (its
 * target and `Proxy-Authorization`), may require credentials (407 without them), and pipes a
 * tunnel to its target. A target is only ever a loopback address, or what `route` maps it to
 * (a test's stand-in for a public address): nothing leaves the machine. Stopped at the end of
 * the test file that started it (./file-end.ts); a bench closes its own.
 */

export interface ConnectProxy {
  /** `http://127.0.0.1:<port>` (`https://` with `tls`), without credentials. */
  url: string;
  port: number;
  /** Every CONNECT, in order: its request target (`host:port`) and credentials. */
  connects: Array<{ target: string; authorization: string | undefined }>;
  /** The local ports of the proxy's connections to targets: a receiver sees them as the sender's. */
  upstreamPorts: Set<number>;
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** `user:password`: a CONNECT without them as Basic credentials is answered 407. */
  credentials?: string;
  /** Serve the proxy itself over TLS (the test certificate, for 127.0.0.1). */
  tls?: boolean;
  /** Where a tunnel goes, given the CONNECT target; default: the target, if it is on loopback. */
  route?: (host: string, port: number) => { host: string; port: number } | undefined;
}

const loopbackOnly = (host: string, port: number) =>
  host === "127.0.0.1" || host === "::1" ? { host, port } : undefined;

/** `host:port` or `[v6]:port` of a CONNECT request line. */
function splitTarget(target: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  return { host: match?.[1] ?? "", port: Number(match?.[2]) };
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const { credentials, route = loopbackOnly } = options;
  const expected = credentials && `Basic ${Buffer.from(credentials).toString("base64")}`;
  const sockets = new Set<Socket | Duplex>();
  const proxy: ConnectProxy = { url: "", port: 0, connects: [], upstreamPorts: new Set(), close };
  const onConnect = (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const authorization = req.headers["proxy-authorization"];
    proxy.connects.push({ target: req.url ?? "", authorization });
    if (expected && authorization !== expected) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="egress"\r\n\r\n',
      );
      return;
    }
    const { host, port } = splitTarget(req.url ?? "");
    const to = isIP(host) ? route(host, port) : undefined;
    if (!to) return void client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    let established = false;
    const upstream = connect(to.port, to.host, () => {
      established = true;
      if (upstream.localPort) proxy.upstreamPorts.add(upstream.localPort);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    sockets.add(upstream);
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
    upstream.on("error", () =>
      established ? client.destroy() : client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"),
    );
  };
  const server = options.tls
    ? createHttpsServer({
        cert: readFileSync(testCertificate().certFile),
        key: readFileSync(testCertificate().keyFile),
      })
    : createHttpServer();
  server.on("connect", onConnect);
  async function close() {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  atFileEnd(close);
  server.listen(0, "127.0.0.1");
  await new Promise<void>((done) => server.once("listening", done));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.url = `${options.tls ? "https" : "http"}://127.0.0.1:${proxy.port}`;
  return proxy;
}

/** `url` with `user:password@` put in (percent-encoded as a URL needs). */
export function withCredentials(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(user);
  parsed.password = encodeURIComponent(password);
  return parsed.href.replace(/\/$/, "");
}
