import { deliveryHeaders } from "@deskline/webhook-verifier";
import type { Dispatcher as HttpDispatcher } from "undici";
import packageJson from "../../../package.json" with { type: "json" };
import { postWebhook } from "./http-client.js";
import { type AttemptOutcome, classifyAttempt } from "./outcome.js";

/**
 * One delivery attempt (docs/design.md, Webhook delivery): the stored event's exact bytes, signed anew
 * with every secret valid now (a `v1` per secret during a rotation) in `Service-Signature` and,
 * for receivers on Svix's or standard-webhooks' libraries, in the Standard Webhooks headers; and
 * the endpoint's custom headers.
 */

export const USER_AGENT = `Deskline-Webhooks/${packageJson.version}`;

export interface AttemptRequest {
  url: string;
  eventId: string;
  eventType: string;
  /** The event's stored JSON, sent byte for byte. */
  payload: string;
  /** The endpoint's secrets valid now, newest first. */
  secrets: string[];
  /** The endpoint's custom headers (webhooks/endpoints/custom-headers.ts), none of them a delivery's own. */
  headers?: Record<string, string>;
}

export interface AttemptReport extends AttemptOutcome {
  startedAt: Date;
  durationMs: number;
}

/** Sends one attempt and reports how it went; never throws for what the endpoint does. */
export async function attemptDelivery(
  http: HttpDispatcher,
  request: AttemptRequest,
  timeoutMs: number,
): Promise<AttemptReport> {
  const startedAt = new Date();
  const started = performance.now();
  const result = await postWebhook(
    http,
    request.url,
    request.payload,
    {
      ...request.headers,
      // The delivery's own headers last: they win, though the custom ones never name them.
      ...deliveryHeaders(
        { ...request, secret: request.secrets, userAgent: USER_AGENT },
        { timestamp: startedAt },
      ),
    },
    timeoutMs,
  );
  const durationMs = Math.round(performance.now() - started);
  return { ...classifyAttempt(result), startedAt, durationMs };
}
