import { createHash } from "node:crypto";
import type { Context, Next } from "koa";
import { stringify } from "safe-stable-stringify";
import { AppError, DomainError, errorBody } from "../errors.js";
import type {
  IdempotencyKeys,
  Reservation,
  StoredResponse,
  Unkept,
} from "../idempotency/idempotency-keys.js";
import { withReplayableIds } from "../ids.js";
import { httpError } from "./error-response.js";

/**
 * The IETF draft's quoted form `"abc"` and the bare form `abc` are the same key. The header's
 * shape (1–255 characters, quoted or bare) was checked against the spec by `parseRequest`.
 */
export function unquoteIdempotencyKey(header: string): string {
  return /^"(.*)"$/s.exec(header)?.[1] ?? header;
}

/**
 * The request as its fingerprint hashes it: method, path and the body as JSON with sorted keys,
 * so key order does not make two equal bodies look different. safe-stable-stringify, as the CLI's
 * idempotency keys (apps/cli/src/import/idempotency.ts), so both read a body alike (an
 * `undefined` member is left out, as JSON.stringify leaves it out).
 */
export function fingerprintText(method: string, path: string, body: unknown): string {
  return `${method}\n${path}\n${stringify(body ?? null)}`;
}

/**
 * Where a key lives (the workspace, or `admin:<id>` for the admin API) and who may replay it:
 * the API key, console session or admin token that made the first request.
 */
export interface IdempotencyScope {
  workspace: string;
  caller: string;
}

/**
 * `Idempotency-Key` on every POST (docs/design.md, API conventions; Stripe's semantics): the same key and request
 * replays the first response with `Idempotent-Replayed: true` and no second side effect; the same
 * key with another request is 422; while the first still runs, 409. 5xx answers are not kept,
 * so the client can retry them. A run that takes over the key of a run that died makes the same
 * ids, so whatever the first run created is found again rather than created twice. Runs after
 * validation: a request rejected as malformed did not start, and keeps no key.
 */
export function idempotency(keys: IdempotencyKeys, scopeOf: (ctx: Context) => IdempotencyScope) {
  return async (ctx: Context, next: Next) => {
    if (ctx.headers["idempotency-key"] === undefined) return next();
    const scope = scopeOf(ctx);
    const id = `${scope.workspace}:${unquoteIdempotencyKey(ctx.get("Idempotency-Key"))}`;
    const fingerprint = createHash("sha256")
      .update(fingerprintText(ctx.method, ctx.path, ctx.state.body))
      .digest("hex");

    const reservation = await keys.reserve(id, fingerprint, undefined, scope.caller);
    if (reservation.outcome !== "replay" && reservation.outcome !== "reserved") {
      throw refusal(reservation);
    }
    if (reservation.outcome === "replay") {
      ctx.status = reservation.response.status;
      ctx.body = reservation.response.body;
      ctx.set("Idempotent-Replayed", "true");
      return;
    }

    try {
      // A run that took the key over after a crash makes the first run's ids, so a record that
      // run already wrote is found, not made twice (records/record.ts `insertNew`).
      const { seed, block, firstRunAt } = reservation;
      await withReplayableIds({ seed, ...(block ? { block } : {}), firstRunAt: firstRunAt.getTime() }, next);
    } catch (error) {
      const answer = error instanceof DomainError ? httpError(error) : error;
      if (answer instanceof AppError && answer.status < 500) {
        await keys.complete(id, reservation.owner, {
          status: answer.status,
          body: errorBody(answer, ctx.state.requestId as string),
        });
      } else {
        await keys.release(id, reservation.owner).catch(() => {});
      }
      throw error;
    }
    const unkept = ctx.state.unkeptInReplay as Unkept | undefined;
    await keys.complete(id, reservation.owner, { status: ctx.status, body: ctx.body }, unkept);
  };
}

/** Why a request cannot take its key, as its answer. */
function refusal(reservation: Exclude<Reservation, { outcome: "replay" | "reserved" }>): AppError {
  const param = "Idempotency-Key";
  switch (reservation.outcome) {
    case "other_caller":
      return new AppError(
        422,
        "idempotency_key_other_caller",
        "This Idempotency-Key was used by another API key or console session of this workspace; " +
          "a replay answers only the caller that made the first request. Use a new key.",
        { param },
      );
    case "mismatch":
      return new AppError(
        422,
        "idempotency_key_reused",
        "This Idempotency-Key was used with a different request; use a new key for a new request.",
        { param },
      );
    case "in_flight":
      return new AppError(
        409,
        "idempotency_key_in_flight",
        "A request with this Idempotency-Key is still being processed; retry in a moment.",
        { param, headers: { "Retry-After": "1" } },
      );
    case "withheld":
      return replayUnavailable(reservation.response);
  }
}

/**
 * Says that this request's answer carries fields never to be stored for a replay (a one-time
 * link): the idempotency layer leaves them out, and refuses the replay with `unkept.advice`.
 */
export function keepOutOfReplay(ctx: Context, unkept: Unkept): void {
  ctx.state.unkeptInReplay = unkept;
}

/**
 * The replay of an answer whose key was not kept (an API key, without SECRETS_ENCRYPTION_KEY:
 * platform/idempotency/idempotency-keys.ts): what the first request made, and what to do instead.
 */
function replayUnavailable(response: StoredResponse): AppError {
  if (response.advice) {
    return new AppError(
      409,
      "idempotency_replay_unavailable",
      `The first request with this Idempotency-Key succeeded; ${response.advice}`,
      { param: "Idempotency-Key" },
    );
  }
  const id = (response.body as { id?: unknown } | null)?.id;
  const made = typeof id === "string" ? ` and created ${id}` : "";
  return new AppError(
    409,
    "idempotency_replay_unavailable",
    `The first request with this Idempotency-Key succeeded${made}; its answer carried a key shown only once, ` +
      "which this server does not keep (SECRETS_ENCRYPTION_KEY is not set). If the key was lost, revoke it and create another.",
    { param: "Idempotency-Key" },
  );
}
