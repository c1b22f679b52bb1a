import type { Measurement } from "./measurement.js";

export interface Row {
  scenario: string;
  connections: number;
  api: Measurement;
  /** What the driver did, e.g. `insertOne`. */
  baseline: string;
  driver: Measurement;
  /** The same load on a bare HTTP server doing the driver's work (scenarios that have one). */
  floor?: { label: string; measured: Measurement };
}

export interface Report {
  seconds: number;
  node: string;
  cpus: number;
  database: string;
  rows: Row[];
  /** Why the run fails; empty when every request was answered 2xx. */
  failures: string[];
}

const ratioOf = (api: Measurement, to: Measurement) => (to.perSecond > 0 ? api.perSecond / to.perSecond : 0);
const ratio = (row: Row) => ratioOf(row.api, row.driver);
const fixed = (value: number, digits: number) => value.toFixed(digits);
// A slow rate keeps a decimal, so that 0.4/s does not read as nothing.
const rate = (value: number) => fixed(value, value < 10 ? 1 : 0);

/** The table for people: one line per scenario and connection count. */
export function formatTable(report: Report): string {
  const header = [
    "scenario",
    "conns",
    "API req/s",
    "p50 ms",
    "p99 ms",
    "non-2xx",
    "raw ops/s",
    "API/raw",
    "floor req/s",
    "API/floor",
  ];
  // Nothing completed within the window: there is no latency to show, and the rate is "< 1/window".
  const none = (m: Measurement) => m.completed === 0;
  const lines = report.rows.map((row) => [
    row.scenario,
    String(row.connections),
    rate(row.api.perSecond),
    none(row.api) ? "—" : fixed(row.api.p50, 1),
    none(row.api) ? "—" : fixed(row.api.p99, 1),
    String(row.api.non2xx + row.api.errors),
    rate(row.driver.perSecond),
    none(row.api) || none(row.driver) ? "—" : `${fixed(ratio(row), 2)}×`,
    row.floor ? rate(row.floor.measured.perSecond) : "",
    row.floor ? `${fixed(ratioOf(row.api, row.floor.measured), 2)}×` : "",
  ]);
  const starved = report.rows.filter((row) => none(row.api) || none(row.driver));
  const widths = header.map((title, i) =>
    Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)),
  );
  // Names left, numbers right, as a table of measurements reads best.
  const render = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ");
  const baselines = [...new Map(report.rows.map((row) => [row.scenario, row.baseline])).entries()];
  const floors = [
    ...new Map(report.rows.flatMap((row) => (row.floor ? [[row.scenario, row.floor.label]] : []))).entries(),
  ];
  return [
    `Deskline server benchmark: ${report.seconds} s per measurement; ${report.database}; Node ${report.node}, ${report.cpus} CPUs`,
    "",
    render(header),
    render(widths.map((width) => "-".repeat(width))),
    ...lines.map(render),
    "",
    "raw = the MongoDB driver alone on the same database, as many operations in flight as connections:",
    ...baselines.map(([scenario, baseline]) => `  ${scenario}: ${baseline}`),
    ...(floors.length
      ? [
          "floor = a bare node:http server (no framework, key, validation or logs) doing the raw work, under",
          "the same load: the most any HTTP API could serve here; API/floor is what our code costs:",
          ...floors.map(([scenario, label]) => `  ${scenario}: ${label}`),
        ]
      : []),
    "non-2xx counts connection errors and timeouts too. The load generator (autocannon) runs in a",
    "worker thread of the bench's process, on the same two cores as the server and the database.",
    ...(starved.length
      ? [
          `—: no operation completed within ${report.seconds} s (${starved.map((r) => `${r.scenario} × ${r.connections}`).join(", ")});`,
          "    each took longer than the window; raise BENCH_SECONDS or use a faster database (MONGODB_URI).",
        ]
      : []),
  ].join("\n");
}

/** `--json`: the same numbers for scripts (rates per second, latencies in milliseconds). */
export function toJson(report: Report): string {
  return JSON.stringify(
    {
      ok: report.failures.length === 0,
      seconds: report.seconds,
      node: report.node,
      cpus: report.cpus,
      database: report.database,
      results: report.rows.map((row) => ({
        scenario: row.scenario,
        connections: row.connections,
        api: summary(row.api),
        raw: { operation: row.baseline, ...summary(row.driver) },
        ratio: Math.round(ratio(row) * 1000) / 1000,
        ...(row.floor && {
          floor: { server: row.floor.label, ...summary(row.floor.measured) },
          floor_ratio: Math.round(ratioOf(row.api, row.floor.measured) * 1000) / 1000,
        }),
      })),
      failures: report.failures,
    },
    null,
    2,
  );
}

function summary(m: Measurement) {
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    per_second: round(m.perSecond),
    p50_ms: round(m.p50),
    p99_ms: round(m.p99),
    completed: m.completed,
    non_2xx: m.non2xx,
    errors: m.errors,
  };
}
