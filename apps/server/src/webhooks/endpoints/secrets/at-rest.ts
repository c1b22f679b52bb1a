import { DatabaseUnavailableError } from "../../../platform/errors.js";
import type { AnswerSealing } from "../../../platform/idempotency/idempotency-keys.js";
import { type Binding, SecretBox } from "../../../platform/secret-box.js";
import type { CustomHeader } from "../custom-headers.js";

/**
 * The one home of the process's keys (docs/decisions.md "Signing secrets at rest"): the box of
 * SECRETS_ENCRYPTION_KEY and _OLD_KEYS is injected once, here, by the composition root, and every
 * seal and open of a stored secret goes through this object: endpoints' signing secrets and
 * custom header values as the endpoint store writes them and deliveries send them, the keys and
 * secrets of stored answers (idempotency), and the write gate that holds creates and rotations
 * while the start-up check runs (webhooks/endpoints/reseal.ts walks and reseals what is stored).
 */

/** A signing secret; `expires_at` null for the current one, set for one being rotated out. */
export interface EndpointSecret {
  /**
   * `whsec_…` (HMAC) or `whsk_…` (an Ed25519 secret key), or sealed (`enc2:…`) when a key is
   * set: open it with `signingSecrets`.
   */
  secret: string;
  /**
   * The `whpk_…` public key of a `whsk_` secret, in the clear (it is public, and answers show it
   * without opening anything); absent or null for an HMAC secret (secrets/signing-keys.ts).
   */
  public_key?: string | null;
  expires_at: Date | null;
}

/** What an endpoint stores sealed: its signing secrets and custom header values, one binding. */
export interface SealedOnEndpoint {
  _id: string;
  workspace_id: string;
  secrets: EndpointSecret[];
  custom_headers: CustomHeader[];
}

/**
 * What a sealed secret (or custom header value) of an endpoint is bound to: it opens in this
 * endpoint's document, of this workspace, only. `legacy` is what secrets sealed before the
 * workspace was bound name (docs/decisions.md "Signing secrets at rest").
 */
export const secretBinding = (doc: Pick<SealedOnEndpoint, "_id" | "workspace_id">): Binding => ({
  context: `webhook_endpoint:${doc.workspace_id}:${doc._id}`,
  legacy: `webhook_endpoint:${doc._id}`,
});

/**
 * The fields of a stored answer that hold a key or secret (docs/decisions.md "Keys and secrets in
 * stored answers"): `secret` (a webhook endpoint's create and rotation) and `key` (the admin API's
 * new API key), each kept `sealed` with a key. Without one, a signing secret is kept as the
 * endpoint itself keeps it (in the clear; the server warns at start), and an API key, stored
 * nowhere else but as a hash, is not kept at all: its replay is answered
 * `409 idempotency_replay_unavailable`.
 */
export const ANSWER_SECRET_FIELDS = ["secret", "key"] as const;
const UNKEPT_IN_THE_CLEAR: readonly string[] = ["key"];

// How long a create or rotation waits for the start-up check of the stored secrets before a 503.
const SECRET_CHECK_WAIT_MS = 5_000;

export class SecretsAtRest {
  /** Opened secrets per endpoint document read: a batch's document is opened once, not per attempt. */
  private readonly opened = new WeakMap<object, EndpointSecret[]>();
  /** Opened custom headers per endpoint document read, as for the secrets. */
  private readonly openedHeaders = new WeakMap<object, Record<string, string>>();
  /** Pending while the start-up check of the stored secrets runs (`holdWrites`). */
  private writesHeld: Promise<void> | undefined;

  /** Without a box (no key), secrets are stored in the clear. */
  constructor(readonly box: SecretBox = new SecretBox()) {}

  seal(plaintext: string, binding: Binding): string {
    return this.box.seal(plaintext, binding);
  }

  /** Throws SecretKeyError when the value is sealed with a key this process lacks, or moved. */
  open(stored: string, binding: Binding): string {
    return this.box.open(stored, binding);
  }

  /**
   * The plaintext secrets deliveries sign with at `now`: the current one and those still in their
   * grace period. Opens sealed ones once per document object (deliveries read each endpoint once
   * per batch). Throws SecretKeyError when a secret is sealed with a key this process lacks.
   */
  signingSecrets(
    doc: Pick<SealedOnEndpoint, "_id" | "workspace_id" | "secrets">,
    now = new Date(),
  ): string[] {
    let secrets = this.opened.get(doc);
    if (!secrets) {
      const context = secretBinding(doc);
      secrets = doc.secrets.map((s) => ({ ...s, secret: this.open(s.secret, context) }));
      this.opened.set(doc, secrets);
    }
    return secrets
      .filter((s) => s.expires_at === null || s.expires_at.getTime() > now.getTime())
      .map((s) => s.secret);
  }

  /** The custom headers deliveries send, name → plaintext value (opened once per document read). */
  customHeaders(
    doc: Pick<SealedOnEndpoint, "_id" | "workspace_id" | "custom_headers">,
  ): Record<string, string> {
    let headers = this.openedHeaders.get(doc);
    if (!headers) {
      const context = secretBinding(doc);
      headers = Object.fromEntries(doc.custom_headers.map((h) => [h.name, this.open(h.value, context)]));
      this.openedHeaders.set(doc, headers);
    }
    return headers;
  }

  /** How stored answers keep their keys and secrets (the idempotency store is told, not aware). */
  readonly answers: AnswerSealing = {
    fields: ANSWER_SECRET_FIELDS,
    seal: (value, field, context) => {
      if (this.box.encrypting) return this.box.seal(value, context);
      return UNKEPT_IN_THE_CLEAR.includes(field) ? undefined : value;
    },
    open: (stored, context) => this.box.open(stored, context),
  };

  /**
   * Until the returned function is called, creates and rotations wait (then answer 503, retry):
   * a process whose key turns out not to open the stored secrets (it then stops) must not seal
   * new ones with that key meanwhile. The start-up check (webhooks/endpoints/reseal.ts) holds them
   * until it has run, which takes moments once the database answers.
   */
  holdWrites(): () => void {
    let release = () => {};
    this.writesHeld = new Promise<void>((done) => {
      release = done;
    });
    return () => {
      this.writesHeld = undefined;
      release();
    };
  }

  /** Waits while writes are held; a 503 (retry) when the check takes too long. */
  async writesAllowed(): Promise<void> {
    const held = this.writesHeld;
    if (!held) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((done) => {
      timer = setTimeout(() => done("late"), SECRET_CHECK_WAIT_MS);
    });
    const outcome = await Promise.race([held, late]);
    clearTimeout(timer);
    if (outcome === "late") throw new DatabaseUnavailableError("stored signing secrets not checked yet");
  }
}
