/**
 * Requests Node's HTTP parser refuses before Koa sees them (headers over its 16 KiB limit, a
 * request line that is not HTTP) would get Node's bare answer without a body; this gives them the
 * API's error body (docs/design.md, API conventions) with a `Request-Id`, like every other answer.
 */
import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { AppError, type ErrorCode, errorBody } from "../errors.js";
import { newId } from "../ids.js";

interface Refusal {
  status: number;
  reason: string;
  code: ErrorCode;
  message: string;
}

const REFUSALS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    code: "header_too_large",
    message: "The request's headers exceed 16 KiB.",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: "Request Timeout",
    code: "request_timeout",
    message: "The request was not received in time.",
  },
};
const MALFORMED: Refusal = {
  status: 400,
  reason: "Bad Request",
  code: "invalid_http_request",
  message: "The request is not well-formed HTTP/1.1.",
};

/** Answers parser-level errors of `server` with a JSON error body, then closes the connection. */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal = REFUSALS[error.code ?? ""] ?? MALFORMED;
    const requestId = newId("req");
    const body = JSON.stringify(
      errorBody(new AppError(refusal.status, refusal.code, refusal.message), requestId),
    );
    socket.end(
      `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
