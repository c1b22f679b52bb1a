// The one place the server's logger is made: JSON lines for machines, readable lines for a person
// at a terminal (LOG_FORMAT, docs/operations.md; why in-process: docs/decisions.md), and the trace
// fields of OpenTelemetry when on.
import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino } from "pino";
import type { LogFormat } from "./config.js";

export type { Logger };

export interface LoggerOptions {
  /** LOG_FORMAT: `auto` is pretty when stdout is a terminal, JSON otherwise. */
  format?: LogFormat;
  /** Whether stdout is a terminal (for `auto`); the process's own by default. */
  isTTY?: boolean;
  /** Fields added to every line, e.g. the active trace's ids (platform/telemetry/index.ts). */
  mixin?: () => object;
}

/** Structured logs; secrets in headers never reach them. */
export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const format = options.format ?? "json";
  const pretty =
    format === "pretty" || (format === "auto" && (options.isTTY ?? process.stdout.isTTY === true));
  const settings = {
    level,
    base: { service: "deskline-server" },
    redact: ["req.headers.authorization", "headers.authorization"],
    ...(options.mixin ? { mixin: options.mixin } : {}),
  };
  return pretty ? pino(settings, prettyStream()) : pino(settings);
}

/**
 * pino-pretty as a stream in this thread (not a transport worker): lines appear in order with the
 * demo banner, and nothing of it is loaded by a process that logs JSON.
 */
function prettyStream(): DestinationStream {
  const require = createRequire(import.meta.url);
  const pretty = require("pino-pretty") as (options: object) => DestinationStream;
  return pretty({
    colorize: process.stdout.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
    singleLine: true,
    sync: true,
  });
}
