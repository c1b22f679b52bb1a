// The progress bar of imports and exports: on a terminal only (stderr), so pipes and cron logs
// get nothing but the summary. Rows per second, and an ETA from the share of the file read so far
// when its size is known.
import cliProgress from "cli-progress";

export interface Progress {
  update(rows: number, bytesRead: number): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

export function startProgress(totalBytes: number | undefined, stream = process.stderr): Progress {
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
