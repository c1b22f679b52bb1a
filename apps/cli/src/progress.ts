// The progress bars of imports, exports and recoveries: on a terminal only (stderr), so pipes and
// cron logs get nothing but the summary. Rows per second, and an ETA from the share of the file
// read so far when its size is known; for a recovery, the share of its window looked at.
import cliProgress from "cli-progress";
import { type Output, terminal } from "./terminal.js";

export interface Progress {
  update(rows: number, bytesRead: number): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

export function startProgress(totalBytes: number | undefined, stream: Output = terminal().stderr): Progress {
  if (!stream.isTTY) return SILENT;
  const started = Date.now();
  const known = totalBytes !== undefined && totalBytes > 0;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: known
        ? "{bar} {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_formatted}"
        : "{rows} rows | {rate} rows/s",
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(known ? totalBytes : 1, 0, { rows: 0, rate: 0 });
  return {
    update(rows, bytesRead) {
      const seconds = (Date.now() - started) / 1000;
      const payload = { rows, rate: seconds > 0 ? Math.round(rows / seconds) : 0 };
      bar.update(known ? bytesRead : 0, payload);
    },
    stop() {
      bar.stop();
    },
  };
}

/** How far a recovery is: its window, and what `getWebhookRecovery` says. */
export interface RecoveryReading {
  since: string;
  until: string;
  scanned: number;
  scanned_until: string | null;
  queued: number;
}

/** `webhooks endpoints recover --wait`: the share of the window looked at, events read, deliveries queued. */
export function startRecoveryProgress(stream: Output = terminal().stderr): {
  update(r: RecoveryReading): void;
  stop(): void;
} {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: "{bar} {percentage}% of the window | {scanned} events read | {queued} deliveries queued",
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(100, 0, { scanned: 0, queued: 0 });
  return {
    update(r) {
      const start = Date.parse(r.since);
      const span = Date.parse(r.until) - start;
      const done =
        r.scanned_until === null ? 0 : span > 0 ? ((Date.parse(r.scanned_until) - start) / span) * 100 : 100;
      bar.update(Math.max(0, Math.min(100, Math.round(done))), { scanned: r.scanned, queued: r.queued });
    },
    stop() {
      bar.stop();
    },
  };
}
