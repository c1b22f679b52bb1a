/**
 * The delivery bench's sizes and rates (delivery.ts lists the variables that change them), and
 * how it logs and writes milliseconds: every scenario module reads them from here, so one run's
 * rows share them.
 */

export const seconds = Number(process.env.BENCH_SECONDS ?? 5);
export const RATE = 100;
export const BACKLOG = 1000;
/** The drain's backlog: one worker drains 10,000 queued deliveries. */
export const DRAIN_BACKLOG = Number(process.env.BENCH_DRAIN_BACKLOG ?? 10_000);
/** The fairness row: the slow endpoint's backlog, its receiver's delay, the fast stream. */
export const SLOW_BACKLOG = 500;
export const SLOW_ANSWER_MS = 2_000;
export const FAIR_RATE = 20;
export const FAIR_SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 30);
/** The fan-out rows: this many deliveries, to 10 endpoints or to as many endpoints (20 per workspace). */
export const FANOUT = Number(process.env.BENCH_FANOUT ?? 2_000);
export const FANOUT_PER_WORKSPACE = 20;
export const FEW_ENDPOINTS = 10;
/** The rate-limit row: the endpoint's limit, and how many seconds of backlog it is given. */
export const RATE_LIMIT = 20;
export const RATE_LIMIT_SECONDS = Number(process.env.BENCH_RATE_LIMIT_SECONDS ?? 60);

export const log = (line: string) => process.stderr.write(`[delivery bench] ${line}\n`);
export const ms = (n: number) => `${n.toFixed(1)} ms`;
