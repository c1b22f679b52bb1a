import { createCipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import {
  isCurrent,
  isSealed,
  keyIdOf,
  SecretBox,
  SecretKeyError,
  sealedKeyId,
} from "../src/platform/secret-box.js";
import { SecretsAtRest, secretBinding } from "../src/webhooks/endpoints/secrets/at-rest.js";

// The sealing of webhook signing secrets (platform/secret-box.ts, used through webhooks/endpoints/secrets/at-rest.ts) as a pure module, and how
// SECRETS_ENCRYPTION_KEY and SECRETS_ENCRYPTION_OLD_KEYS are read. The server-level behaviour
// (start-up, rotation, replays) is in secrets-at-rest.test.ts.

const key = () => randomBytes(32);
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

/** enc1, made here with node:crypto as the earlier release made it (AAD `webhook_endpoint:<id>`). */
function sealedAsEnc1(k: Buffer, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", k, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(SECRET, "utf8"), cipher.final()]);
  return `enc1:${keyIdOf(k)}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url")}`;
}

describe("an endpoint's sealed secrets, as deliveries open them (signingSecrets)", () => {
  it("an enc1 secret still signs; an enc2 one copied to the same id in another workspace does not open", () => {
    const k = key();
    const box = new SecretBox(k);
    const secrets = new SecretsAtRest(box);
    const here = { _id: "we_1", workspace_id: "ws_1" };
    const legacy = {
      ...here,
      secrets: [{ secret: sealedAsEnc1(k, "webhook_endpoint:we_1"), expires_at: null }],
    };
    expect(secrets.signingSecrets(legacy)).toEqual([SECRET]);
    const current = box.seal(SECRET, secretBinding(here));
    expect(secrets.signingSecrets({ ...here, secrets: [{ secret: current, expires_at: null }] })).toEqual([
      SECRET,
    ]);
    const copied = { _id: "we_1", workspace_id: "ws_2", secrets: [{ secret: current, expires_at: null }] };
    expect(() => secrets.signingSecrets(copied)).toThrow(SecretKeyError);
  });
});

describe("SecretBox: sealing and opening", () => {
  it("seals to enc2:<key id>:…, never showing the secret, and opens in the same context", () => {
    const k = key();
    const box = new SecretBox(k);
    const sealed = box.seal(SECRET, "webhook_endpoint:we_1");
    expect(sealed).toMatch(new RegExp(`^enc2:${keyIdOf(k)}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain("whsec_");
    expect(isSealed(sealed)).toBe(true);
    expect(sealedKeyId(sealed)).toBe(keyIdOf(k));
    expect(box.open(sealed, "webhook_endpoint:we_1")).toBe(SECRET);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal(SECRET, "webhook_endpoint:we_1")).not.toBe(sealed);
  });

  it.each([
    ["another context (a ciphertext moved to another endpoint)", (s: string) => s, "webhook_endpoint:we_2"],
    [
      "a changed character",
      (s: string) => s.slice(0, -3) + (s.at(-3) === "A" ? "B" : "A") + s.slice(-2),
      "c",
    ],
    ["a truncated ciphertext", (s: string) => s.slice(0, -4), "c"],
  ])("refuses to open after %s", (_label, alter, context) => {
    const box = new SecretBox(key());
    const sealed = box.seal(SECRET, "c");
    expect(() => box.open(alter(sealed), context)).toThrow(SecretKeyError);
  });
});

describe("SecretBox: old keys and the workspace binding", () => {
  it("opens with an old key, names a missing key, and reseals under the current one", () => {
    const old = key();
    const current = key();
    const sealedOld = new SecretBox(old).seal(SECRET, "c");
    expect(() => new SecretBox(current).open(sealedOld, "c")).toThrow(
      new SecretKeyError(
        `a secret is sealed with key ${keyIdOf(old)}, which is not configured`,
        keyIdOf(old),
      ),
    );
    const rotating = new SecretBox(current, [old]);
    expect(rotating.open(sealedOld, "c")).toBe(SECRET);
    const moved = rotating.reseal(sealedOld, "c");
    expect(sealedKeyId(moved)).toBe(keyIdOf(current));
    expect(new SecretBox(current).open(moved, "c")).toBe(SECRET);
    expect(rotating.reseal(moved, "c")).toBe(moved);
    expect(sealedKeyId(rotating.reseal(SECRET, "c"))).toBe(keyIdOf(current));
  });

  it("binds the workspace: a value sealed for one endpoint of one workspace opens nowhere else", () => {
    const box = new SecretBox(key());
    const here = { context: "webhook_endpoint:ws_1:we_1", legacy: "webhook_endpoint:we_1" };
    const sealed = box.seal(SECRET, here);
    expect(box.open(sealed, here)).toBe(SECRET);
    // The same endpoint id under another workspace (a document copied across): refused.
    expect(() => box.open(sealed, { ...here, context: "webhook_endpoint:ws_2:we_1" })).toThrow(
      SecretKeyError,
    );
  });

  it("opens values sealed before the workspace was bound (enc1) under their old context, and reseals them as enc2", () => {
    const k = key();
    const box = new SecretBox(k);
    const enc1 = sealedAsEnc1(k, "webhook_endpoint:we_1");
    const here = { context: "webhook_endpoint:ws_1:we_1", legacy: "webhook_endpoint:we_1" };
    expect(box.open(enc1, here)).toBe(SECRET);
    expect(isCurrent(enc1, keyIdOf(k))).toBe(false);
    const moved = box.reseal(enc1, here);
    expect(moved).toMatch(/^enc2:/);
    expect(isCurrent(moved, keyIdOf(k))).toBe(true);
    expect(box.open(moved, here)).toBe(SECRET);
    // enc2 does not fall back to the legacy context.
    expect(() =>
      box.open(moved, { context: "webhook_endpoint:we_1", legacy: "webhook_endpoint:we_1" }),
    ).toThrow(SecretKeyError);
  });
});

describe("SecretBox: values it refuses, and no key at all", () => {
  it("refuses a value too short to carry an IV and a full 16-byte tag (the tag length is pinned)", () => {
    const k = key();
    const box = new SecretBox(k);
    // An IV and a 4-byte "tag", which GCM would check if the length were not pinned.
    const short = `enc2:${keyIdOf(k)}:${randomBytes(16).toString("base64url")}`;
    expect(() => box.open(short, "c")).toThrow(SecretKeyError);
    expect(() => box.open(`enc2:${keyIdOf(k)}:${randomBytes(20).toString("base64url")}`, "c")).toThrow(
      SecretKeyError,
    );
  });

  it("with a key, refuses a value stored unsealed (written by someone else) instead of using it", () => {
    const box = new SecretBox(key());
    expect(() => box.open(SECRET, "c")).toThrow(SecretKeyError);
    expect(box.reseal(SECRET, "c")).toMatch(/^enc2:/);
  });

  it("without a key stores and opens plaintext as it is", () => {
    const box = new SecretBox();
    expect(box.encrypting).toBe(false);
    expect(box.seal(SECRET, "c")).toBe(SECRET);
    expect(box.open(SECRET, "c")).toBe(SECRET);
    expect(() => box.open(new SecretBox(key()).seal(SECRET, "c"), "c")).toThrow(SecretKeyError);
  });
});

describe("SECRETS_ENCRYPTION_KEY and SECRETS_ENCRYPTION_OLD_KEYS", () => {
  const a = key();
  const b = key();
  it("read base64 (and base64url) keys of 32 bytes", () => {
    const config = loadConfig({
      SECRETS_ENCRYPTION_KEY: a.toString("base64"),
      SECRETS_ENCRYPTION_OLD_KEYS: ` ${b.toString("base64url")} ,`,
    });
    expect(config.secretsEncryptionKey).toEqual(a);
    expect(config.secretsEncryptionOldKeys).toEqual([b]);
    expect(loadConfig({}).secretsEncryptionKey).toBeUndefined();
  });

  it.each([
    [{ SECRETS_ENCRYPTION_KEY: "too-short" }, "SECRETS_ENCRYPTION_KEY must be 32 random bytes"],
    [{ SECRETS_ENCRYPTION_KEY: randomBytes(16).toString("base64") }, "got 16 bytes"],
    [{ SECRETS_ENCRYPTION_KEY: "not base64 at all!" }, "not base64"],
    [
      { SECRETS_ENCRYPTION_KEY: a.toString("base64"), SECRETS_ENCRYPTION_OLD_KEYS: "x,y" },
      "each of SECRETS_ENCRYPTION_OLD_KEYS must be 32 random bytes",
    ],
    [
      { SECRETS_ENCRYPTION_OLD_KEYS: b.toString("base64") },
      "SECRETS_ENCRYPTION_OLD_KEYS needs SECRETS_ENCRYPTION_KEY",
    ],
  ])("%j is a configuration error", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
