import { replayContext } from "./platform/idempotency/store.js";
import type { Logger } from "./platform/logger.js";
import { type SecretBox, SecretKeyError, sealedKeyId } from "./platform/secret-box.js";
import type { Store } from "./store.js";
import type { CustomHeader } from "./webhooks/custom-headers.js";
import { type EndpointSecret, secretContext } from "./webhooks/endpoints.js";

/**
 * Keeps the stored signing secrets (and the endpoints' custom header values) in step with the configured keys (docs/decisions.md "Signing
 * secrets at rest"): at start, plaintext secrets are sealed in place and every sealed one must
 * open, or the server stops; `deskline-server reencrypt-secrets` moves every secret to the
 * current key. Each document is changed by one conditional update (only while it still holds
 * what was read), so a crash, a second process doing the same, or a rotation racing it leaves
 * every secret either as it was or sealed, never lost; running it again finishes the job.
 */

export interface SealReport {
  /** Secrets of endpoints (and stored replays) sealed or resealed by this run. */
  sealed: number;
  /** Endpoint documents and stored replays written. */
  documents: number;
  /** Secrets that stay under an older key (only without `rekey`). */
  underOldKeys: number;
}

const TRIES = 5;

/** Where webhook signing secrets are stored: endpoints and the replays of create and rotate. */
async function eachStoredSecretSet(
  store: Store,
  visit: (
    values: string[],
    context: string,
    write: (next: string[]) => Promise<boolean>,
    reread: () => Promise<string[] | null>,
  ) => Promise<void>,
): Promise<void> {
  const endpoints = store.webhookEndpoints.collection;
  // An endpoint's signing secrets and its custom header values are sealed alike (one context),
  // and visited as one set: secrets first, then the header values.
  const projection = { secrets: 1, custom_headers: 1 };
  for await (const doc of endpoints.find({}, { projection })) {
    let current: EndpointSecret[] = doc.secrets;
    let headers: CustomHeader[] | undefined = doc.custom_headers;
    const values = () => [...current.map((s) => s.secret), ...(headers ?? []).map((h) => h.value)];
    await visit(
      values(),
      secretContext(doc._id),
      async (next) => {
        const secrets = current.map((s, i) => ({ ...s, secret: next[i] as string }));
        const sealedHeaders = headers?.map((h, i) => ({ ...h, value: next[current.length + i] as string }));
        const { matchedCount } = await endpoints.updateOne(
          {
            _id: doc._id,
            secrets: current,
            // An endpoint stored before endpoints had headers has no such field.
            custom_headers: headers ?? { $exists: false },
          },
          { $set: { secrets, ...(sealedHeaders ? { custom_headers: sealedHeaders } : {}) } },
        );
        return matchedCount === 1;
      },
      async () => {
        const fresh = await endpoints.findOne({ _id: doc._id }, { projection });
        current = fresh?.secrets ?? [];
        headers = fresh?.custom_headers;
        return fresh ? values() : null;
      },
    );
  }
  const replays = store.idempotencyKeys.collection;
  for await (const doc of replays.find({ "response.body.secret": { $type: "string" } })) {
    const secret = (doc.response?.body as { secret?: unknown } | undefined)?.secret;
    if (typeof secret !== "string") continue;
    let value = secret;
    await visit(
      [value],
      replayContext(doc._id),
      async ([next]) => {
        const { matchedCount } = await replays.updateOne(
          { _id: doc._id, "response.body.secret": value },
          { $set: { "response.body.secret": next } },
        );
        return matchedCount === 1;
      },
      async () => {
        const fresh = await replays.findOne({ _id: doc._id });
        const secret = (fresh?.response?.body as { secret?: unknown } | undefined)?.secret;
        if (typeof secret !== "string") return null;
        value = secret;
        return [value];
      },
    );
  }
}

/**
 * Seals every plaintext secret with the current key and checks that every sealed one opens;
 * with `rekey`, also reseals those under older keys. Throws SecretKeyError at the first secret
 * no configured key opens. Needs a key.
 */
export async function sealStoredSecrets(store: Store, box: SecretBox, rekey: boolean): Promise<SealReport> {
  if (!box.encrypting) throw new Error("sealStoredSecrets needs SECRETS_ENCRYPTION_KEY");
  const report: SealReport = { sealed: 0, documents: 0, underOldKeys: 0 };
  await eachStoredSecretSet(store, async (values, context, write, reread) => {
    let current: string[] | null = values;
    for (let attempt = 0; current && attempt < TRIES; attempt++) {
      const next = current.map((value) => {
        const plaintext = box.open(value, context); // throws when no key opens it
        const keyId = sealedKeyId(value);
        if (keyId === undefined || (rekey && keyId !== box.currentKeyId)) return box.seal(plaintext, context);
        return value;
      });
      const changed = next.filter((value, i) => value !== current?.[i]).length;
      if (changed === 0) {
        report.underOldKeys += next.filter((value) => sealedKeyId(value) !== box.currentKeyId).length;
        return;
      }
      if (await write(next)) {
        report.sealed += changed;
        report.documents += 1;
        report.underOldKeys += next.filter((value) => sealedKeyId(value) !== box.currentKeyId).length;
        return;
      }
      current = await reread(); // changed meanwhile (a rotation): look again
    }
  });
  return report;
}

/** Is any stored secret sealed? (Without a key, that is fatal.) */
async function anySealed(store: Store): Promise<string | undefined> {
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
export async function prepareSecretsAtRest(store: Store, box: SecretBox, logger: Logger): Promise<void> {
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
    report = await sealStoredSecrets(store, box, false);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    throw new SecretKeyError(
      `SECRETS_ENCRYPTION_KEY cannot decrypt the stored webhook signing secrets: ${error.message} ` +
        `(keys set: ${box.knownKeyIds.join(", ")}). Set SECRETS_ENCRYPTION_KEY, or add the key they ` +
        "were encrypted with to SECRETS_ENCRYPTION_OLD_KEYS (docs/operations.md)",
      error.keyId,
    );
  }
  logger.info(
    { keyId: box.currentKeyId, sealed: report.sealed, underOldKeys: report.underOldKeys },
    report.underOldKeys
      ? "webhook signing secrets are encrypted at rest; some are under an older key: run `deskline-server reencrypt-secrets`"
      : "webhook signing secrets are encrypted at rest",
  );
}
