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
  return new SoakWriter(options);
}

class SoakWriter implements Writer {
  readonly accepted: AcceptedWrite[] = [];
  readonly answers: Answers = new Map();
  readonly rejected: Writer["rejected"] = [];
  readonly uncertain: AcceptedWrite[] = [];
  private readonly records: Record<Kind, Written[]> = { contact: [], ticket: [] };
  private readonly running = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private readonly maxInFlight: number;
  private readonly requestTimeoutMs: number;
  private readonly giveUpAfterMs: number;
  private phase = "start";
  private createShare = 0.5;
  private writing = 0;
  private unresolvedCount = 0;
  private skipped = 0;
  private sequence = 0;

  constructor(private readonly options: WriterOptions) {
    this.maxInFlight = options.maxInFlight ?? 64;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.giveUpAfterMs = options.giveUpAfterMs ?? 180_000;
    this.timer = setInterval(() => this.tick(), 1000 / options.rate);
  }

  unresolved(): number {
    return this.unresolvedCount;
  }

  skippedTicks(): number {
    return this.skipped;
  }

  inFlight(): number {
    return this.writing;
  }

  setPhase(next: string): void {
    this.phase = next;
  }

  setCreateShare(share: number): void {
    this.createShare = share;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.running.size) await Promise.all([...this.running]);
  }

  /**
   * Counts an answer under the phase its request was sent and answered in; one that crossed a
   * phase change goes under `<sent>→<answered>`. A write sent just before the database was cut
   * commits, then its event relay fails at the cut (the sweep relays it later) and it is answered
   * 200 during the outage: rightly, but not an answer to a request made while the database was away.
   */
  private count(answer: string, sentIn: string): void {
    const key = sentIn === this.phase ? this.phase : `${sentIn}→${this.phase}`;
    const byAnswer = this.answers.get(key) ?? new Map<string, number>();
    byAnswer.set(answer, (byAnswer.get(answer) ?? 0) + 1);
    this.answers.set(key, byAnswer);
  }

  /** Sends until a definite answer; undefined when given up. */
  private send(method: string, path: string, body: unknown) {
    const key = randomUUID();
    return retry(UNTIL_DEFINITE, () => this.sendOnce(method, path, body, key), {
      giveUp: giveUpAfter(this.giveUpAfterMs),
    });
  }

  private async sendOnce(method: string, path: string, body: unknown, key: string) {
    const sentIn = this.phase;
    try {
      const response = await fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.apiKey}`,
          "Content-Type": "application/json",
          "Idempotency-Key": key,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      const text = await response.text();
      this.count(String(response.status), sentIn);
      if (isTransient(response.status, text)) return AGAIN;
      return { status: response.status, text };
    } catch (error) {
      this.count((error as Error).name === "TimeoutError" ? "timeout" : "connection", sentIn);
      return AGAIN;
    }
  }

  /** The created or patched record; null when unresolved, undefined when refused. */
  private async write(
    method: string,
    path: string,
    body: unknown,
    what: string,
  ): Promise<{ id: string } | null | undefined> {
    const answer = await this.send(method, path, body);
    if (!answer) {
      this.unresolvedCount++;
      return null;
    }
    if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.text) as { id: string };
    this.rejected.push({ write: what, status: answer.status, body: answer.text.slice(0, 300) });
    return undefined;
  }

  private async create(kind: Kind): Promise<void> {
    const n = ++this.sequence;
    const contacts = this.records.contact;
    const contact = contacts[Math.floor(Math.random() * contacts.length)];
    const body =
      kind === "contact"
        ? { name: `Soak contact ${n}`, tags: ["soak"] }
        : { subject: `Soak ticket ${n}`, priority: "normal", ...(contact ? { contact_id: contact.id } : {}) };
    const made = await this.write("POST", `/open/v1/${kind}s`, body, `create ${kind} ${n}`);
    if (!made) return;
    this.accepted.push({ op: "create", kind, id: made.id });
    this.records[kind].push({ id: made.id, version: 1, busy: false });
  }

  private async patch(record: Written, kind: Kind): Promise<void> {
    record.busy = true;
    const value = `${kind} ${record.id} v${record.version++}`;
    const path = `/open/v1/${kind}s/${record.id}`;
    const made = await this.write("PATCH", path, { [PATCHED_FIELD[kind]]: value }, `patch ${kind}`);
    const written: AcceptedWrite = { op: "patch", kind, id: record.id, value };
    if (made) this.accepted.push(written);
    else if (made === null) this.uncertain.push(written);
    record.busy = false;
  }

  /** Creates and patches (of a record not being patched already), both kinds alike. */
  private tick(): void {
    if (this.writing >= this.maxInFlight) {
      this.skipped++;
      return;
    }
    const kind: Kind = Math.random() < 0.5 ? "contact" : "ticket";
    const idle = this.records[kind].filter((r) => !r.busy);
    const target =
      Math.random() >= this.createShare ? idle[Math.floor(Math.random() * idle.length)] : undefined;
    if (!target && this.createShare === 0) return;
    const job = (target ? this.patch(target, kind) : this.create(kind)).finally(() => {
      this.writing--;
      this.running.delete(job);
    });
    this.writing++;
    this.running.add(job);
  }
}
