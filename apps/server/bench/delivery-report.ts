import type { Drained } from "./delivery-drain.js";
import { loadAverage } from "./delivery-kit.js";
import type { Proxied } from "./delivery-proxy.js";
import {
  BACKLOG,
  DRAIN_BACKLOG,
  FAIR_RATE,
  FAIR_SECONDS,
  FANOUT,
  FANOUT_PER_WORKSPACE,
  FEW_ENDPOINTS,
  ms,
  RATE,
  RATE_LIMIT,
  RATE_LIMIT_SECONDS,
  SLOW_ANSWER_MS,
  SLOW_BACKLOG,
  seconds,
} from "./delivery-settings.js";
import type { Streamed } from "./delivery-stream.js";

/** What the delivery bench measured, scenario by scenario (delivery.ts), for its table. */
export interface Figures {
  bareP50: number;
  bareP99: number;
  apiWritesPerSecond: number;
  deliveriesPerSecond: number;
  drain: Drained;
  /** The same drain with SECRETS_ENCRYPTION_KEY set. */
  sealedDrain: Drained;
  /** The drain and the ROLE=all stream through a loopback CONNECT proxy. */
  proxied: Proxied;
  all: Streamed;
  noEndpoint: Streamed;
  worker: Streamed;
  fair: Streamed;
  slowArrived: number;
  sameHost: Streamed;
  fewEndpoints: number;
  manyEndpoints: number;
  besideIdle: number;
  pacedRate: number;
}

/** The table and its notes; `startLoad` is the load average when the run began. */
export function formatReport(r: Figures, startLoad: string): string {
  const lines = [
    `Webhook delivery (${RATE} events/s for ${seconds} s; HTTPS receiver on 127.0.0.1)`,
    "| scenario | p50 | p99 | vs baseline |",
    "|---|--:|--:|---|",
    ...latencyRows(r).map((row) => `| ${row.join(" | ")} |`),
    ...rateRows(r),
    ...proxyRows(r),
    `CPU per event at ${RATE}/s (server processes, embedded database): ROLE=all: ${r.all.cpuPerEvent}; ROLE=all, no endpoint: ${r.noEndpoint.cpuPerEvent}; separate: ${r.worker.cpuPerEvent}`,
    `lost: ROLE=all ${r.all.lost}, worker ${r.worker.lost}; load average at the end ${loadAverage()} (${startLoad} at the start)`,
  ];
  return `\n${lines.join("\n")}\n`;
}

/** The rows of latencies: scenario, p50, p99, against what. */
function latencyRows(r: Figures): string[][] {
  const answerRatio = r.all.writeP50 / r.noEndpoint.writeP50;
  return [
    [
      "write → receiver, ROLE=all",
      ms(r.all.p50),
      ms(r.all.p99),
      `${(r.all.p50 / r.bareP50).toFixed(1)}× bare POST p50 (${ms(r.bareP50)}); the write's answer p50 ${ms(r.all.writeP50)}, p99 ${ms(r.all.writeP99)}`,
    ],
    [
      "write → receiver, separate worker",
      ms(r.worker.p50),
      ms(r.worker.p99),
      `${(r.worker.p50 / r.bareP50).toFixed(1)}× bare POST p50; the write's answer p50 ${ms(r.worker.writeP50)}, p99 ${ms(r.worker.writeP99)}`,
    ],
    [
      "the write's answer, ROLE=all, one endpoint vs none",
      ms(r.all.writeP50),
      ms(r.all.writeP99),
      `${answerRatio.toFixed(2)}× the answer with no endpoint (p50 ${ms(r.noEndpoint.writeP50)}, p99 ${ms(r.noEndpoint.writeP99)}; target ≤ 1.5×)`,
    ],
    [
      `write → receiver, fast endpoint beside a slow one (ROLE=all, ${FAIR_RATE}/s for ${FAIR_SECONDS} s)`,
      ms(r.fair.p50),
      ms(r.fair.p99),
      `target p50 < 100 ms; the slow endpoint answers after ${SLOW_ANSWER_MS / 1000} s, ${SLOW_BACKLOG} queued, ${r.slowArrived} reached it by the end; lost ${r.fair.lost}`,
    ],
    [
      `write → receiver, fast endpoint beside a slow one on the same host (two paths of one port)`,
      ms(r.sameHost.p50),
      ms(r.sameHost.p99),
      `target p50 < 100 ms; the slow path answers after ${SLOW_ANSWER_MS / 1000} s with ${SLOW_BACKLOG} queued; lost ${r.sameHost.lost}`,
    ],
  ];
}

/** The rows of rates (deliveries a second, against the API's writes or each other), as table lines. */
function rateRows(r: Figures): string[] {
  const { drain, sealedDrain } = r;
  return [
    `| sustained deliveries/s (ROLE=all, ${BACKLOG} backlog) | ${r.deliveriesPerSecond.toFixed(0)}/s | | ${(r.deliveriesPerSecond / r.apiWritesPerSecond).toFixed(2)}× the API's create-contact rate (${r.apiWritesPerSecond.toFixed(0)}/s) |`,
    `| drain deliveries/s (one ROLE=worker, ${DRAIN_BACKLOG} queued) | ${drain.perSecond.toFixed(0)}/s | | ${(drain.perSecond / r.apiWritesPerSecond).toFixed(2)}× the API's create-contact rate; worker CPU ${drain.cpuPerDelivery.toFixed(2)} ms per delivery (database ${drain.databaseCpuPerDelivery.toFixed(2)} ms, receiver and bench ${drain.receiverCpuPerDelivery.toFixed(2)} ms) |`,
    `| fan-out: ${FANOUT} deliveries to ${FANOUT} endpoints (${FANOUT / FANOUT_PER_WORKSPACE} workspaces × ${FANOUT_PER_WORKSPACE}), one worker | ${(FANOUT / r.manyEndpoints).toFixed(0)}/s | | ${(r.manyEndpoints / r.fewEndpoints).toFixed(2)}× the time to ${FEW_ENDPOINTS} endpoints (${r.fewEndpoints.toFixed(2)} s against ${r.manyEndpoints.toFixed(2)} s; target ≤ 1.5×, and ≥ 1,000/s) |`,
    `| fan-out to ${FEW_ENDPOINTS} endpoints beside ${FANOUT} that delivered earlier | ${(FANOUT / r.besideIdle).toFixed(0)}/s | | ${(r.besideIdle / r.fewEndpoints).toFixed(2)}× the same on a fresh database (target ≤ 1.1×) |`,
    `| an endpoint's rate_limit ${RATE_LIMIT}/s, ${RATE_LIMIT * RATE_LIMIT_SECONDS} queued, two workers | ${r.pacedRate.toFixed(2)}/s | | ${(r.pacedRate / RATE_LIMIT).toFixed(3)}× the limit (target within 10 %) |`,
    `| drain with signing secrets encrypted at rest | ${sealedDrain.perSecond.toFixed(0)}/s | | ${(sealedDrain.perSecond / drain.perSecond).toFixed(2)}× the drain without a key (target within 5 %); worker CPU ${sealedDrain.cpuPerDelivery.toFixed(2)} ms per delivery |`,
  ];
}

/** Through the egress proxy, against the direct path measured beside it (delivery-proxy.ts). */
function proxyRows(r: Figures): string[] {
  const { drain, all, directDrain, directAll, drainConnects, streamConnects } = r.proxied;
  return [
    `| write → receiver through a CONNECT proxy on 127.0.0.1 (ROLE=all, ${RATE}/s) | ${ms(all.p50)} | ${ms(all.p99)} | ${(all.p50 / directAll.p50).toFixed(2)}× p50 and ${(all.p99 / directAll.p99).toFixed(2)}× p99 of the direct stream beside it (${ms(directAll.p50)}, ${ms(directAll.p99)}); CPU per event ${all.cpuPerEvent} (direct ${directAll.cpuPerEvent}); ${streamConnects} CONNECTs; lost ${all.lost} |`,
    `| drain through the proxy (one ROLE=worker, ${DRAIN_BACKLOG} queued) | ${drain.perSecond.toFixed(0)}/s | | ${(drain.perSecond / directDrain.perSecond).toFixed(2)}× the direct drain beside it (${directDrain.perSecond.toFixed(0)}/s); worker CPU ${drain.cpuPerDelivery.toFixed(2)} ms per delivery (direct ${directDrain.cpuPerDelivery.toFixed(2)} ms); receiver, proxy and bench ${drain.receiverCpuPerDelivery.toFixed(2)} ms (direct ${directDrain.receiverCpuPerDelivery.toFixed(2)} ms); ${drainConnects} CONNECTs |`,
  ];
}
