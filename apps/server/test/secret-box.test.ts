import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/platform/config.js";
import { isSealed, keyIdOf, SecretBox, SecretKeyError, sealedKeyId } from "../src/platform/secret-box.js";

// The sealing of webhook signing secrets (platform/secret-box.ts) as a pure module, and how
// SECRETS_ENCRYPTION_KEY and SECRETS_ENCRYPTION_OLD_KEYS are read. The server-level behaviour
// (start-up, rotation, replays) is in secrets-at-rest.test.ts.

const key = () => randomBytes(32);
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

describe("SecretBox", () => {
  it("seals to enc1:<key id>:…, never showing the secret, and opens in the same context", () => {
    const k = key();
    const box = new SecretBox(k);
    const sealed = box.seal(SECRET, "webhook_endpoint:we_1");
    expect(sealed).toMatch(new RegExp(`^enc1:${keyIdOf(k)}:[A-Za-z0-9_-]+$`));
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
