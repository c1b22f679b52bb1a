import { type Logger, pino } from "pino";

export type { Logger };

/** Structured JSON logs; secrets in headers never reach them. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "deskline-server" },
    redact: ["req.headers.authorization", "headers.authorization"],
  });
}
