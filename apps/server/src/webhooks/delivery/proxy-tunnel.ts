import { request as httpRequest } from "node:http";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { type SecureContext, connect as tlsConnect } from "node:tls";
import type { EgressProxy } from "../egress-proxy.js";

/**
 * The HTTP CONNECT tunnel a delivery's connection is opened through when WEBHOOK_PROXY_URL is set
 * (../egress-proxy.ts reads it). The tunnel goes to an address the delivery agent has already
 * resolved and checked against the address policy (http-client.ts), never to a host name the
 * proxy would resolve: so the proxy is no way around the SSRF guard (docs/decisions.md,
 * "Deliveries through an egress proxy").
 */

/** The proxy would not open the tunnel, or could not be reached; the message says which, plainly. */
export class ProxyConnectError extends Error {
  readonly code = "ERR_WEBHOOK_PROXY";
}

/** How long the proxy has to answer a CONNECT: undici's own connect timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The connection to the proxy itself: TLS for an https:// proxy, checked against the same CAs as
 * receivers; node:http speaks CONNECT over it.
 */
function connectionTo(proxy: EgressProxy, secureContext: SecureContext): Socket {
  if (proxy.protocol === "http:") return netConnect({ host: proxy.hostname, port: proxy.port });
  return tlsConnect({
    host: proxy.hostname,
    port: proxy.port,
    secureContext,
    ...(isIP(proxy.hostname) ? {} : { servername: proxy.hostname }),
  });
}

/**
 * A socket tunnelled by `proxy` to `address`:`port` (an IP address the caller checked), by HTTP
 * CONNECT. `secureContext` is trusted for an https:// proxy's own certificate.
 */
export function openTunnel(
  proxy: EgressProxy,
  target: { address: string; port: number },
  secureContext: SecureContext,
): Promise<Socket> {
  const authority = `${target.address.includes(":") ? `[${target.address}]` : target.address}:${target.port}`;
  const req = httpRequest({
    method: "CONNECT",
    path: authority,
    createConnection: () => connectionTo(proxy, secureContext),
    timeout: CONNECT_TIMEOUT_MS,
    headers: {
      host: authority,
      ...(proxy.authorization ? { "proxy-authorization": proxy.authorization } : {}),
    },
  });
  return new Promise((resolve, reject) => {
    // Node hands every answer to a CONNECT to this event, a refusal too.
    req.once("connect", (response, socket, head) => {
      socket.setTimeout(0);
      if (response.statusCode !== 200) {
        socket.destroy();
        const status = `${response.statusCode} ${response.statusMessage ?? ""}`.trim();
        return reject(new ProxyConnectError(`proxy refused CONNECT: ${status}`));
      }
      // Nothing comes before the client speaks, but bytes read past the answer are the tunnel's.
      if (head.length) socket.unshift(head);
      // node:http has let go of the socket: an error on it (the tunnel cut under TLS) must not
      // go unheard and end the process; the connection on top fails and says so.
      socket.on("error", () => socket.destroy());
      resolve(socket);
    });
    req.once("timeout", () =>
      req.destroy(
        new ProxyConnectError(`proxy did not answer CONNECT within ${CONNECT_TIMEOUT_MS / 1000} s`),
      ),
    );
    req.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error instanceof ProxyConnectError
          ? error
          : new ProxyConnectError(`proxy unreachable: ${error.code ?? error.message}`, { cause: error }),
      ),
    );
    req.end();
  });
}
