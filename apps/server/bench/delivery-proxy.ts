import { startConnectProxy } from "../test/helpers/connect-proxy.js";
import { type Bench, deployment } from "./delivery-deployment.js";
import { drainOnce } from "./delivery-drain.js";
import { log, RATE } from "./delivery-settings.js";
import { stream, writeAtRate } from "./delivery-stream.js";

/**
 * Deliveries through an egress proxy (WEBHOOK_PROXY_URL): a CONNECT proxy on 127.0.0.1 in the
 * bench's own process (beside the receiver), against the direct path measured next to it (a
 * shared machine's load drifts within a run): a drain direct then through the proxy, and a
 * ROLE=all stream at RATE through the proxy then direct. Keep-alive tunnels carry many
 * deliveries each, so the cost is mostly the extra hop's bytes, and a CONNECT per new connection.
 */
export async function throughProxy(bench: Bench) {
  const proxy = await startConnectProxy();
  const env = { WEBHOOK_PROXY_URL: proxy.url };
  const directDrain = await drainOnce(bench, {}, "drain, direct (beside the proxy's)");
  const drain = await drainOnce(bench, env, "drain through the proxy");
  const drainConnects = proxy.connects.length;
  const all = await streamOnce(bench, env, "through the proxy");
  const streamConnects = proxy.connects.length - drainConnects;
  const directAll = await streamOnce(bench, {}, "direct (beside the proxy's)");
  await proxy.close();
  return { drain, all, directDrain, directAll, drainConnects, streamConnects };
}

/** A ROLE=all process of its own, a second unmeasured (its first requests compile code), then BENCH_SECONDS at RATE. */
async function streamOnce(bench: Bench, env: Record<string, string>, label: string) {
  const all = await deployment(bench, ["all"], env);
  await writeAtRate(all.write, all.cpu, { duration: 1, to: bench.target });
  const streamed = await stream(all.write, all.cpu, { to: bench.target });
  log(`ROLE=all at ${RATE}/s, ${label}: ${JSON.stringify(streamed)}`);
  await all.stop();
  return streamed;
}

export type Proxied = Awaited<ReturnType<typeof throughProxy>>;
