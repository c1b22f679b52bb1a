import { startConnectProxy } from "../test/helpers/connect-proxy.js";
import { type Bench, deployment } from "./delivery-deployment.js";
import { drainOnce } from "./delivery-drain.js";
import { log, RATE } from "./delivery-settings.js";
import { stream, writeAtRate } from "./delivery-stream.js";

/**
 * Deliveries through an egress proxy (WEBHOOK_PROXY_URL): a CONNECT proxy on 127.0.0.1 in the
 * bench's own process (beside the receiver), the drain and the ROLE=all stream of this run
 * again through it; delivery-report.ts puts them against the direct rows. Keep-alive tunnels
 * carry many deliveries each, so the cost is mostly the extra hop's bytes, and a CONNECT per
 * new connection.
 */
export async function throughProxy(bench: Bench) {
  const proxy = await startConnectProxy();
  const env = { WEBHOOK_PROXY_URL: proxy.url };
  const drain = await drainOnce(bench, env, "drain through the proxy");
  const drainConnects = proxy.connects.length;
  const all = await deployment(bench, ["all"], env);
  // A second unmeasured first, as the direct stream had: the process's first requests compile code.
  await writeAtRate(all.write, all.cpu, { duration: 1, to: bench.target });
  const streamed = await stream(all.write, all.cpu, { to: bench.target });
  log(`ROLE=all at ${RATE}/s through the proxy: ${JSON.stringify(streamed)}`);
  await all.stop();
  const connects = proxy.connects.length;
  await proxy.close();
  return { drain, all: streamed, drainConnects, streamConnects: connects - drainConnects };
}

export type Proxied = Awaited<ReturnType<typeof throughProxy>>;
