import { randomUUID } from "node:crypto";
import { AGAIN, type BackoffPolicy, giveUpAfter, retry } from "../src/platform/backoff.js";

/**
 * The crash trials' client: writes at a steady rate (creates and patches of contacts and tickets)
 * as a careful integration would. Every write carries an Idempotency-Key and is retried with the
 * same key (and body) after a connection error, a timeout, a 503, a 429 or a 409 "still in
 * flight", until the server gives a definite answer. What it accepted is the ledger the audit
 * compares the events with; the answers it saw are counted per phase (e.g. during an outage).
 */

export type Kind = "contact" | "ticket";

/** One accepted write and the event it must have caused. */
export type AcceptedWrite =
  | { op: "create"; kind: Kind; id: string }
  | { op: "patch"; kind: Kind; id: string; value: string };

/** The field a patch changes, per kind: a new value every time, so every patch emits an event. */
export const PATCHED_FIELD: Record<Kind, "name" | "subject"> = { contact: "name", ticket: "subject" };

export interface WriterOptions {
  baseUrl: string;
  apiKey: string;
  /** Writes started per second. */
  rate: number;
  /** Writes in flight at most; a tick finding them all busy is skipped (and counted). */
  maxInFlight?: number;
  /** Per attempt; a request not answered by then counts as a hang and is retried. */
  requestTimeoutMs?: number;
  /** How long one write keeps retrying before it is given up as unresolved. */
  giveUpAfterMs?: number;
}

/** Answers seen, by phase: status codes as strings, plus `connection` and `timeout`. */
export type Answers = Map<string, Map<string, number>>;

export interface Writer {
  accepted: AcceptedWrite[];
  answers: Answers;
  /** Writes that got a 4xx other than the retried ones, or a 5xx other than 503: each a finding. */
  rejected: { write: string; status: number; body: string }[];
  /** Writes that never got a definite answer: their outcome is unknown to the audit. */
  unresolved: () => number;
  /** Patches among those: their event may or may not exist, and neither is a finding. */
  uncertain: AcceptedWrite[];
  skippedTicks: () => number;
  inFlight: () => number;
  /** Names the phase the following answers are counted under. */
  setPhase(phase: string): void;
  /** The share of writes that create (the rest patch); 0.5 at first. */
  setCreateShare(share: number): void;
  /** Stops starting writes and waits for those in flight to resolve. */
  stop(): Promise<void>;
}

/** Answers that say "not now": the same request is sent again (409 only when still in flight). */
function isTransient(status: number, text: string): boolean {
  return status === 503 || status === 429 || (status === 409 && text.includes("idempotency_key_in_flight"));
}
/** Between tries of one write: 100 ms, 200 ms … then every 2 s. */
const UNTIL_DEFINITE: BackoffPolicy = { firstMs: 100, factor: 2, maxMs: 2000 };

interface Written {
  id: string;
  /** The next version number of the patched field; patches of one record never overlap. */
  version: number;
  busy: boolean;
}

export function startWriter(options: WriterOptions): Writer {
  const { baseUrl, apiKey, rate } = options;
  const maxInFlight = options.maxInFlight ?? 64;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const giveUpAfterMs = options.giveUpAfterMs ?? 180_000;
  const records: Record<Kind, Written[]> = { contact: [], ticket: [] };
  const accepted: AcceptedWrite[] = [];
  const answers: Answers = new Map();
  const rejected: Writer["rejected"] = [];
  const uncertain: AcceptedWrite[] = [];
  let phase = "start";
  let createShare = 0.5;
  let inFlight = 0;
  let unresolved = 0;
  let skipped = 0;
  let sequence = 0;
  const running = new Set<Promise<void>>();

  /**
   * Counts an answer under the phase its request was sent and answered in; one that crossed a
   * phase change goes under `<sent>→<answered>`. A write sent just before the database was cut
   * commits, then its event relay fails at the cut (the sweep relays it later) and it is answered
   * 200 during the outage: rightly, but not an answer to a request made while the database was away.
   */
  const count = (answer: string, sentIn: string) => {
    const key = sentIn === phase ? phase : `${sentIn}→${phase}`;
    const byAnswer = answers.get(key) ?? new Map<string, number>();
    byAnswer.set(answer, (byAnswer.get(answer) ?? 0) + 1);
    answers.set(key, byAnswer);
  };

  /** Sends until a definite answer; undefined when given up. */
  const send = async (method: string, path: string, body: unknown) => {
    const key = randomUUID();
    return retry(
      UNTIL_DEFINITE,
      async () => {
        const sentIn = phase;
        try {
          const response = await fetch(`${baseUrl}${path}`, {
            method,
            headers: {
              Authorization: `Bearer ${apiKey}`,
              "Content-Type": "application/json",
              "Idempotency-Key": key,
            },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(requestTimeoutMs),
          });
          const text = await response.text();
          count(String(response.status), sentIn);
          if (isTransient(response.status, text)) return AGAIN;
          return { status: response.status, text };
        } catch (error) {
          count((error as Error).name === "TimeoutError" ? "timeout" : "connection", sentIn);
          return AGAIN;
        }
      },
      { giveUp: giveUpAfter(giveUpAfterMs) },
    );
  };

  /** The created or patched record; null when unresolved, undefined when refused. */
  const write = async (
    method: string,
    path: string,
    body: unknown,
    what: string,
  ): Promise<{ id: string } | null | undefined> => {
    const answer = await send(method, path, body);
    if (!answer) {
      unresolved++;
      return null;
    }
    if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.text) as { id: string };
    rejected.push({ write: what, status: answer.status, body: answer.text.slice(0, 300) });
    return undefined;
  };

  const create = async (kind: Kind) => {
    const n = ++sequence;
    const contact = records.contact[Math.floor(Math.random() * records.contact.length)];
    const body =
      kind === "contact"
        ? { name: `Soak contact ${n}`, tags: ["soak"] }
        : { subject: `Soak ticket ${n}`, priority: "normal", ...(contact ? { contact_id: contact.id } : {}) };
    const made = await write("POST", `/open/v1/${kind}s`, body, `create ${kind} ${n}`);
    if (!made) return;
    accepted.push({ op: "create", kind, id: made.id });
    records[kind].push({ id: made.id, version: 1, busy: false });
  };

  const patch = async (record: Written, kind: Kind) => {
    record.busy = true;
    const value = `${kind} ${record.id} v${record.version++}`;
    const made = await write(
      "PATCH",
      `/open/v1/${kind}s/${record.id}`,
      { [PATCHED_FIELD[kind]]: value },
      `patch ${kind}`,
    );
    const written: AcceptedWrite = { op: "patch", kind, id: record.id, value };
    if (made) accepted.push(written);
    else if (made === null) uncertain.push(written);
    record.busy = false;
  };

  /** Creates and patches (of a record not being patched already), both kinds alike. */
  const tick = () => {
    if (inFlight >= maxInFlight) {
      skipped++;
      return;
    }
    const kind: Kind = Math.random() < 0.5 ? "contact" : "ticket";
    const idle = records[kind].filter((r) => !r.busy);
    const target = Math.random() >= createShare ? idle[Math.floor(Math.random() * idle.length)] : undefined;
    if (!target && createShare === 0) return;
    const job = (target ? patch(target, kind) : create(kind)).finally(() => {
      inFlight--;
      running.delete(job);
    });
    inFlight++;
    running.add(job);
  };

  const timer = setInterval(tick, 1000 / rate);
  return {
    accepted,
    answers,
    rejected,
    unresolved: () => unresolved,
    uncertain,
    skippedTicks: () => skipped,
    inFlight: () => inFlight,
    setPhase(next) {
      phase = next;
    },
    setCreateShare(share) {
      createShare = share;
    },
    async stop() {
      clearInterval(timer);
      while (running.size) await Promise.all([...running]);
    },
  };
}
