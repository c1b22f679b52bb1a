import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Webhook signing secrets encrypted at rest (docs/decisions.md "Signing secrets at rest"):
 * AES-256-GCM from node:crypto under SECRETS_ENCRYPTION_KEY, each ciphertext tagged with the id
 * of the key that sealed it, so SECRETS_ENCRYPTION_OLD_KEYS still open what an earlier key sealed.
 * Each ciphertext is bound to where it is stored (`context`, authenticated but not encrypted), so
 * a secret copied into another document, or another workspace's, does not open there. Without a key, secrets stay as they
 * are (plaintext), as before.
 */

/**
 * A sealed value: `enc<version>:<key id>:<base64url of iv ‖ ciphertext ‖ tag>`. Version 2 binds
 * the full `context` (an endpoint's workspace and id); version 1, sealed before, bound a shorter
 * one (`legacy`), and still opens under it until `reencrypt-secrets` seals it again as version 2.
 */
const SEALED = /^enc([12]):([0-9a-f]{16}):([A-Za-z0-9_-]+)$/;
const VERSION = "2";
const IV_BYTES = 12;
/** Pinned: a decipher told no length would take a shortened (forgeable) tag. */
const TAG_BYTES = 16;

/**
 * Where a sealed value is stored, authenticated with it (not encrypted): it opens there only.
 * `legacy` is what version-1 values of that place were bound to.
 */
export type Binding = string | { context: string; legacy: string };
const contextOf = (binding: Binding, version: string): string =>
  typeof binding === "string" ? binding : version === "1" ? binding.legacy : binding.context;

/** A key's public id: the first 8 bytes of a hash of it, hex. Names the key, reveals nothing of it. */
export function keyIdOf(key: Buffer): string {
  return createHash("sha256").update("deskline secrets key id\0").update(key).digest("hex").slice(0, 16);
}

/** The stored value is sealed (else it is a plaintext secret). */
export const isSealed = (stored: string): boolean => SEALED.test(stored);

/** The id of the key that sealed `stored`, or undefined for a plaintext one. */
export const sealedKeyId = (stored: string): string | undefined => SEALED.exec(stored)?.[2];

/** Sealed in the current format, under `keyId`: nothing for `reencrypt-secrets` to do. */
export const isCurrent = (stored: string, keyId: string | undefined): boolean => {
  const match = SEALED.exec(stored);
  return match?.[1] === VERSION && match[2] === keyId;
};

/** A sealed value whose key is not configured, or that does not open under it. */
export class SecretKeyError extends Error {
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
  }
}

export class SecretBox {
  /** The id of SECRETS_ENCRYPTION_KEY, or undefined when secrets are stored in the clear. */
  readonly currentKeyId: string | undefined;
  private readonly current: Buffer | undefined;
  private readonly keys = new Map<string, Buffer>();

  /** `current`: SECRETS_ENCRYPTION_KEY; `old`: SECRETS_ENCRYPTION_OLD_KEYS (open only). 32 bytes each. */
  constructor(current?: Buffer, old: Buffer[] = []) {
    this.current = current;
    this.currentKeyId = current ? keyIdOf(current) : undefined;
    for (const key of [...old, ...(current ? [current] : [])]) this.keys.set(keyIdOf(key), key);
  }

  /** Whether new secrets are sealed (a key is set). */
  get encrypting(): boolean {
    return this.current !== undefined;
  }

  /** Every key id this box can open. */
  get knownKeyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** `plaintext` sealed under the current key for `context`, or itself without a key. */
  seal(plaintext: string, binding: Binding): string {
    if (!this.current || !this.currentKeyId) return plaintext;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.current, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(contextOf(binding, VERSION)));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const sealed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
    return `enc${VERSION}:${this.currentKeyId}:${sealed}`;
  }

  /**
   * The plaintext of a stored value. Without a key a plaintext one is itself; with a key every
   * stored value must be sealed (one written in the clear by someone else is refused, as one that
   * does not open is). Throws SecretKeyError.
   */
  open(stored: string, binding: Binding): string {
    const match = SEALED.exec(stored);
    if (!match) {
      if (!this.encrypting) return stored;
      throw new SecretKeyError(
        "a secret is stored unsealed although SECRETS_ENCRYPTION_KEY is set",
        undefined,
      );
    }
    const [, version = "", keyId = "", data = ""] = match;
    const key = this.keys.get(keyId);
    if (!key) {
      throw new SecretKeyError(`a secret is sealed with key ${keyId}, which is not configured`, keyId);
    }
    const bytes = Buffer.from(data, "base64url");
    try {
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error("too short for an IV and a full tag");
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(contextOf(binding, version)));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const body = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretKeyError(`a secret sealed with key ${keyId} does not open (altered or moved)`, keyId);
    }
  }

  /**
   * `stored` under the current key and format: sealed anew unless it already is, a plaintext one
   * sealed (no key: unchanged). `reencrypt-secrets` is its one caller.
   */
  reseal(stored: string, binding: Binding): string {
    if (!this.encrypting || isCurrent(stored, this.currentKeyId)) return stored;
    return this.seal(isSealed(stored) ? this.open(stored, binding) : stored, binding);
  }
}
