import type { IdempotencyDoc, IdempotencyKeys } from "../../platform/idempotency/idempotency-keys.js";
import { replayContext } from "../../platform/idempotency/idempotency-keys.js";
import type { Logger } from "../../platform/logger.js";
import { type Binding, isCurrent, SecretKeyError, sealedKeyId } from "../../platform/secret-box.js";
import type { CustomHeader } from "./custom-headers.js";
import { type EndpointSecret, type SecretsAtRest, secretBinding } from "./secrets/at-rest.js";
import type { WebhookEndpoints } from "./store.js";

/**
 * Keeps the stored keys, signing secrets and endpoints' custom header values in step with the configured keys (docs/decisions.md
 * "Signing secrets at rest"): at start, with a key, every stored one must be sealed and open, or
 * the server stops; `deskline-server reencrypt-secrets` seals plaintext ones and moves every one
 * to the current key and format. Each document is changed by one conditional update (only while it still holds
 * what was read), so a crash, a second process doing the same, or a rotation racing it leaves
 * every secret either as it was or sealed, never lost; running it again finishes the job.
 */

export interface SealReport {
  /** Secrets of endpoints (and stored replays) sealed or resealed by this run. */
  sealed: number;
  /** Endpoint documents and stored replays written. */
  documents: number;
  /** Secrets under an older key or in the older format (the start-up check counts them). */
  notCurrent: number;
}

const TRIES = 5;

/** Where keys and secrets are stored, and the one box they are sealed with. */
export interface SecretStores {
  secrets: SecretsAtRest;
  webhookEndpoints: Pick<WebhookEndpoints, "collection">;
  idempotencyKeys: Pick<IdempotencyKeys, "collection" | "sealing">;
}

/** Visits one stored set of secrets: their values, what they are bound to, how to write them back. */
type Visit = (
  values: string[],
  binding: Binding,
  write: (next: string[]) => Promise<boolean>,
  reread: () => Promise<string[] | null>,
) => Promise<void>;

/** Where keys and secrets are stored: endpoints' signing secrets, and stored answers that carry one. */
async function eachStoredSecretSet(store: SecretStores, visit: Visit): Promise<void> {
  const endpoints = store.webhookEndpoints.collection;
  // An endpoint's signing secrets and its custom header values are sealed alike (one binding),
  // and visited as one set: secrets first, then the header values.
  const projection = { secrets: 1, custom_headers: 1, workspace_id: 1 };
  for await (const doc of endpoints.find({}, { projection })) {
    let current: EndpointSecret[] = doc.secrets;
    let headers: CustomHeader[] = doc.custom_headers;
    const values = () => [...current.map((s) => s.secret), ...headers.map((h) => h.value)];
    await visit(
      values(),
      secretBinding(doc),
      async (next) => {
        const secrets = current.map((s, i) => ({ ...s, secret: next[i] as string }));
        const sealedHeaders = headers.map((h, i) => ({ ...h, value: next[current.length + i] as string }));
        const { matchedCount } = await endpoints.updateOne(
          {
            _id: doc._id,
            secrets: current,
            custom_headers: headers,
          },
          { $set: { secrets, custom_headers: sealedHeaders } },
        );
        return matchedCount === 1;
      },
      async () => {
        const fresh = await endpoints.findOne({ _id: doc._id }, { projection });
        current = fresh?.secrets ?? [];
        headers = fresh?.custom_headers ?? [];
        return fresh ? values() : null;
      },
    );
  }
  for (const field of store.idempotencyKeys.sealing.fields) {
    await eachStoredAnswer(store, `response.body.${field}`, visit);
  }
}

/** The stored answers (idempotency_keys) holding a key or secret at `path`. */
async function eachStoredAnswer(store: SecretStores, path: string, visit: Visit): Promise<void> {
  const replays = store.idempotencyKeys.collection;
  const storedAt = (doc: IdempotencyDoc | null) => {
    const value = doc
      ? path.split(".").reduce<unknown>((at, part) => (at as Record<string, unknown> | null)?.[part], doc)
      : undefined;
    return typeof value === "string" ? value : undefined;
  };
  for await (const doc of replays.find({ [path]: { $type: "string" } })) {
    let value = storedAt(doc);
    if (value === undefined) continue;
    await visit(
      [value],
      replayContext(doc._id),
      async ([next]) => {
        const { matchedCount } = await replays.updateOne(
          { _id: doc._id, [path]: value },
          { $set: { [path]: next } },
        );
        return matchedCount === 1;
      },
      async () => {
        value = storedAt(await replays.findOne({ _id: doc._id }));
        return value === undefined ? null : [value];
      },
    );
  }
}

/**
 * `reencrypt-secrets`: seals every plaintext key or secret, and reseals every one under an older
 * key or in the older format, with the current key. Throws SecretKeyError at the first value no
 * configured key opens. Needs a key.
 */
export async function sealStoredSecrets(store: SecretStores): Promise<SealReport> {
  const { box } = store.secrets;
  if (!box.encrypting) throw new Error("sealStoredSecrets needs SECRETS_ENCRYPTION_KEY");
  const report: SealReport = { sealed: 0, documents: 0, notCurrent: 0 };
  await eachStoredSecretSet(store, async (values, binding, write, reread) => {
    let current: string[] | null = values;
    for (let attempt = 0; current && attempt < TRIES; attempt++) {
      const next = current.map((value) => box.reseal(value, binding)); // throws when no key opens it
      const changed = next.filter((value, i) => value !== current?.[i]).length;
      if (changed === 0) return;
      if (await write(next)) {
        report.sealed += changed;
        report.documents += 1;
        return;
      }
      current = await reread(); // changed meanwhile (a rotation): look again
    }
  });
  return report;
}

/**
 * The start-up check with a key: every stored key or secret must be sealed and open. One in the
 * clear stops the start as one that does not open does (docs/decisions.md "Signing secrets at
 * rest"): `reencrypt-secrets` seals what an earlier keyless run stored. Counts those not under
 * the current key and format.
 */
async function checkStoredSecrets(store: SecretStores): Promise<SealReport> {
  const { box } = store.secrets;
  const report: SealReport = { sealed: 0, documents: 0, notCurrent: 0 };
  await eachStoredSecretSet(store, async (values, binding) => {
    for (const value of values) {
      box.open(value, binding);
      if (!isCurrent(value, box.currentKeyId)) report.notCurrent += 1;
    }
  });
  return report;
}

/** Is any stored secret sealed? (Without a key, that is fatal.) */
async function anySealed(store: SecretStores): Promise<string | undefined> {
  let found: string | undefined;
  await eachStoredSecretSet(store, async (values) => {
    found ??= values.map(sealedKeyId).find((id) => id !== undefined);
  });
  return found;
}

/**
 * The start-up step: with a key, seal what is plaintext and make sure everything opens; without
 * one, make sure nothing is sealed and say once that secrets are stored in the clear. Throws
 * SecretKeyError (the server must not start: it would send deliveries with bad signatures).
 */
async function prepareSecretsAtRest(store: SecretStores, logger: Logger): Promise<void> {
  const { box } = store.secrets;
  if (!box.encrypting) {
    const keyId = await anySealed(store);
    if (keyId) {
      throw new SecretKeyError(
        `webhook signing secrets are encrypted (key ${keyId}) but SECRETS_ENCRYPTION_KEY is not set; ` +
          "set it to the key they were encrypted with (docs/operations.md)",
        keyId,
      );
    }
    logger.warn(
      "webhook signing secrets are stored in the clear: set SECRETS_ENCRYPTION_KEY to encrypt them (docs/operations.md)",
    );
    return;
  }
  let report: SealReport;
  try {
    report = await checkStoredSecrets(store);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    const fix =
      error.keyId === undefined
        ? "Run `deskline-server reencrypt-secrets` to seal them, then start again (docs/operations.md)"
        : "Set SECRETS_ENCRYPTION_KEY, or add the key they were encrypted with to SECRETS_ENCRYPTION_OLD_KEYS (docs/operations.md)";
    throw new SecretKeyError(
      `SECRETS_ENCRYPTION_KEY cannot decrypt the stored webhook signing secrets: ${error.message} ` +
        `(keys set: ${box.knownKeyIds.join(", ")}). ${fix}`,
      error.keyId,
    );
  }
  logger.info(
    { keyId: box.currentKeyId, notCurrent: report.notCurrent },
    report.notCurrent
      ? "webhook signing secrets are encrypted at rest; some are under an older key or format: run `deskline-server reencrypt-secrets`"
      : "webhook signing secrets are encrypted at rest",
  );
}

/**
 * Holds creates and rotations from now until the returned start-up check has run (and passed):
 * call it before the app takes requests, and run the check once the database answers, before
 * any delivery. The check throws SecretKeyError (the server must not start); writes stay held.
 */
export function holdSecretWritesUntilChecked(store: SecretStores, logger: Logger): () => Promise<void> {
  const release = store.secrets.holdWrites();
  return async () => {
    await prepareSecretsAtRest(store, logger);
    release();
  };
}
