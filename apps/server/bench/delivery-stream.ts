import type { Arrivals } from "./delivery-backlog.js";
import type { Cpu, Written } from "./delivery-deployment.js";
import { RATE, seconds } from "./delivery-settings.js";

/**
 * A stream of writes at a steady rate and what it shows: each delivery's latency from write to
 * receiver, the write's own answer time, deliveries lost, and CPU per event.
 */

/** The figures of one or more streams together (latencies in ms). */
export interface Streamed {
  p50: number;
  p99: number;
  lost: number;
  writeP50: number;
  writeP99: number;
  cpuPerEvent: string;
}

export interface StreamOptions {
  /** Seconds (BENCH_SECONDS unless given). */
  duration?: number;
  /** Writes a second. */
  rate?: number;
  /** Where the deliveries arrive; null when the workspace has no endpoint. */
  to: Arrivals | null;
}
export type StreamRun = Awaited<ReturnType<typeof writeAtRate>>;

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/**
 * `rate` writes a second for `duration` seconds, each on time whatever the ones before do;
 * then waits (2 minutes at most) for their deliveries at `to` (none when null: no endpoint).
 * The raw figures, for `summary`.
 */
export async function writeAtRate(
  write: () => Promise<Written>,
  cpu: Cpu,
  { duration = seconds, rate = RATE, to }: StreamOptions,
) {
  const cpuBefore = cpu();
  const sent: Written[] = [];
  const total = rate * duration;
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    pending.push(write().then((s) => void sent.push(s)));
  }
  await Promise.all(pending);
  const arrived = to?.arrived ?? new Map<string, number>();
  const deadline = performance.now() + 120_000;
  while (to && sent.some((s) => !arrived.has(s.contactId)) && performance.now() < deadline) {
    await new Promise((done) => setTimeout(done, 50));
  }
  const latencies = sent.map((s) => (arrived.get(s.contactId) ?? Number.NaN) - s.started);
  return {
    total,
    lost: to ? latencies.filter(Number.isNaN).length : 0,
    delivered: latencies.filter((l) => !Number.isNaN(l)),
    // The API's answer time is part of the latency: a slow write shows here, not in delivery.
    answers: sent.map((s) => s.answered - s.started),
    cpu: cpu().map((c, i) => ({ role: c.role, ms: c.ms - (cpuBefore[i]?.ms ?? 0) })),
  };
}

/** The figures of one or more runs together. */
export function summary(runs: StreamRun[]): Streamed {
  const total = runs.reduce((sum, r) => sum + r.total, 0);
  const delivered = runs.flatMap((r) => r.delivered);
  const answers = runs.flatMap((r) => r.answers);
  const cpuPerEvent = (runs[0]?.cpu ?? [])
    .map(({ role }, i) => {
      const used = runs.reduce((sum, r) => sum + (r.cpu[i]?.ms ?? 0), 0);
      return `${role} ${(used / total).toFixed(2)} ms`;
    })
    .join(", ");
  return {
    cpuPerEvent,
    p50: percentile(delivered, 50),
    p99: percentile(delivered, 99),
    lost: runs.reduce((sum, r) => sum + r.lost, 0),
    writeP50: percentile(answers, 50),
    writeP99: percentile(answers, 99),
  };
}

/** One run's figures. */
export const stream = async (...args: Parameters<typeof writeAtRate>) =>
  summary([await writeAtRate(...args)]);
