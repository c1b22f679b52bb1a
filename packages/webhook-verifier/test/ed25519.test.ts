// `v1a` (Ed25519) signatures, held to two independent implementations: Svix's server's published
// vector (svix-webhooks, server/svix-server/src/worker.rs, `test_asymmetric_key_signing`), and
// node:crypto's own `sign`/`verify` over the string each scheme signs, with keys made here.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  generateSigningKeyPair,
  signPayload,
  signPayloadAsync,
  signStandardWebhook,
  verifySignature,
  verifySignatureAsync,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
} from "../src/index.js";
import { codeOf, codeOfAsync } from "./codes.js";

const SVIX = {
  secretKey: "whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==",
  publicKey: "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==",
};

const BODY =
  '{"id":"evt_1","object":"event","type":"contact.created","created":1,"data":{"id":"con_1","object":"contact","name":"Zoë"}}';
const T = 1_700_000_000;
const AT = { now: T };

/** A key pair made by node:crypto, with its `whsk_`/`whpk_` forms written here from the JWK. */
function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const seed = Buffer.from(jwk.d as string, "base64url");
  const raw = Buffer.from(jwk.x as string, "base64url");
  return {
    privateKey,
    publicKey,
    secretKey: `whsk_${Buffer.concat([seed, raw]).toString("base64")}`,
    publicKeyText: `whpk_${raw.toString("base64")}`,
  };
}

/** node:crypto's verdict on a base64 signature of `message`. */
const nodeVerifies = (message: string, signature: string, key: KeyObject) =>
  verify(null, Buffer.from(message), key, Buffer.from(signature, "base64"));

describe("Svix's published v1a vector", () => {
  const headers = { "webhook-id": SVIX.id, "webhook-timestamp": String(SVIX.timestamp) };
  const at = { now: SVIX.timestamp };

  it("signs to the same signature (Ed25519 is deterministic)", () => {
    const signed = signStandardWebhook(SVIX.id, SVIX.body, SVIX.secretKey, { timestamp: SVIX.timestamp });
    expect(signed["webhook-signature"]).toBe(SVIX.signature);
  });

  it("verifies with the public key, sync and on WebCrypto, body as string and bytes", async () => {
    const all = { ...headers, "webhook-signature": SVIX.signature };
    for (const body of [SVIX.body, Buffer.from(SVIX.body)]) {
      expect(verifyStandardWebhook(body, all, SVIX.publicKey, at)).toBe(SVIX.timestamp);
      expect(await verifyStandardWebhookAsync(body, all, SVIX.publicKey, at)).toBe(SVIX.timestamp);
    }
    // The secret key verifies too: its second half is the public key.
    expect(verifyStandardWebhook(SVIX.body, all, SVIX.secretKey, at)).toBe(SVIX.timestamp);
  });

  it("fails a tampered body, another id and another key", async () => {
    const all = { ...headers, "webhook-signature": SVIX.signature };
    const other = keyPair().publicKeyText;
    expect(codeOf(() => verifyStandardWebhook(`${SVIX.body} `, all, SVIX.publicKey, at))).toBe(
      "signature_mismatch",
    );
    expect(
      await codeOfAsync(() => verifyStandardWebhookAsync(`${SVIX.body} `, all, SVIX.publicKey, at)),
    ).toBe("signature_mismatch");
    expect(
      codeOf(() => verifyStandardWebhook(SVIX.body, { ...all, "webhook-id": "msg_2" }, SVIX.publicKey, at)),
    ).toBe("signature_mismatch");
    expect(codeOf(() => verifyStandardWebhook(SVIX.body, all, other, at))).toBe("signature_mismatch");
  });
});

describe("v1a in webhook-signature, against node:crypto", () => {
  it("the package's signature verifies with node:crypto over `<id>.<timestamp>.<body>`", () => {
    const keys = keyPair();
    const signed = signStandardWebhook("evt_1", BODY, keys.secretKey, { timestamp: T });
    const [scheme, signature] = signed["webhook-signature"].split(",") as [string, string];
    expect(scheme).toBe("v1a");
    expect(nodeVerifies(`evt_1.${T}.${BODY}`, signature, keys.publicKey)).toBe(true);
    expect(nodeVerifies(`evt_1.${T}.${BODY} `, signature, keys.publicKey)).toBe(false);
  });

  it("node:crypto's signature verifies with the package, sync and async; a tampered body fails", async () => {
    const keys = keyPair();
    const signature = sign(null, Buffer.from(`evt_9.${T}.${BODY}`), keys.privateKey).toString("base64");
    const headers = new Headers({
      "webhook-id": "evt_9",
      "webhook-timestamp": String(T),
      "webhook-signature": `v0,ignored v1a,${signature}`,
    });
    expect(verifyStandardWebhook(BODY, headers, keys.publicKeyText, AT)).toBe(T);
    expect(await verifyStandardWebhookAsync(BODY, headers, keys.publicKeyText, AT)).toBe(T);
    expect(codeOf(() => verifyStandardWebhook(`${BODY}x`, headers, keys.publicKeyText, AT))).toBe(
      "signature_mismatch",
    );
    expect(
      await codeOfAsync(() => verifyStandardWebhookAsync(`${BODY}x`, headers, keys.publicKeyText, AT)),
    ).toBe("signature_mismatch");
  });

  it("signs once per key during a rotation, HMAC and Ed25519 mixed; each key verifies", () => {
    const [a, b] = [keyPair(), keyPair()];
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const signed = signStandardWebhook("evt_1", BODY, [a.secretKey, secret, b.secretKey], { timestamp: T });
    const items = signed["webhook-signature"].split(" ");
    expect(items.map((item) => item.split(",")[0])).toEqual(["v1a", "v1", "v1a"]);
    for (const key of [a.publicKeyText, b.publicKeyText, secret]) {
      expect(verifyStandardWebhook(BODY, signed, key, AT)).toBe(T);
    }
    // The standardwebhooks library checks the `v1` and skips the `v1a` it does not know.
    expect(
      new Webhook(secret).verify(BODY, { ...signStandardWebhook("evt_1", BODY, [a.secretKey, secret]) }),
    ).toEqual(JSON.parse(BODY));
  });

  it("verifies `v1` signed by the standardwebhooks library (an independent HMAC)", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const signature = new Webhook(secret).sign("evt_3", new Date(T * 1000), BODY);
    const headers = { "webhook-id": "evt_3", "webhook-timestamp": String(T), "webhook-signature": signature };
    expect(verifyStandardWebhook(BODY, headers, secret, AT)).toBe(T);
    expect(codeOf(() => verifyStandardWebhook(BODY, headers, `whsec_${"A".repeat(44)}`, AT))).toBe(
      "signature_mismatch",
    );
  });

  it("refuses missing headers, bad timestamps, malformed signatures and stale deliveries", () => {
    const keys = keyPair();
    const signed = signStandardWebhook("evt_1", BODY, keys.secretKey, { timestamp: T });
    const check = (headers: Record<string, string | string[] | undefined>, options = AT) =>
      codeOf(() => verifyStandardWebhook(BODY, headers, keys.publicKeyText, options));
    expect(check({ ...signed, "webhook-id": undefined })).toBe("missing_header");
    expect(check({ ...signed, "webhook-signature": ["a", "b"] })).toBe("malformed_header");
    expect(check({ ...signed, "webhook-timestamp": "1e9" })).toBe("invalid_timestamp");
    expect(check({ ...signed, "webhook-signature": "v2,abc" })).toBe("missing_signature");
    expect(check({ ...signed, "webhook-signature": "v1a,abcd" })).toBe("invalid_signature_format");
    expect(check({ ...signed, "webhook-signature": "v1,abcd" })).toBe("invalid_signature_format");
    expect(
      check({ ...signed, "webhook-signature": Array(17).fill(signed["webhook-signature"]).join(" ") }),
    ).toBe("too_many_signatures");
    expect(check({ ...signed }, { now: T + 301 })).toBe("timestamp_out_of_tolerance");
  });
});

describe("generateSigningKeyPair", () => {
  it("makes a whsk_ whose seed node:crypto derives the whpk_ from; its signatures verify with node:crypto", () => {
    const pair = generateSigningKeyPair();
    const secret = Buffer.from(pair.secretKey.slice("whsk_".length), "base64");
    expect(secret).toHaveLength(64);
    // PKCS#8 of an Ed25519 seed (RFC 8410): a fixed 16-byte prefix, then the 32 bytes.
    const pkcs8 = Buffer.concat([
      Buffer.from("302e020100300506032b657004220420", "hex"),
      secret.subarray(0, 32),
    ]);
    const privateKey = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
    const derived = createPublicKey(privateKey).export({ format: "jwk" }).x as string;
    expect(pair.publicKey).toBe(`whpk_${Buffer.from(derived, "base64url").toString("base64")}`);
    expect(secret.subarray(32).toString("base64")).toBe(pair.publicKey.slice("whpk_".length));
    const header = signPayload(BODY, pair.secretKey, { timestamp: T });
    const publicKey = createPublicKey(privateKey);
    expect(nodeVerifies(`evt_1.${T}.${BODY}`, header.slice(header.indexOf("v1a=") + 4), publicKey)).toBe(
      true,
    );
    expect(generateSigningKeyPair().publicKey).not.toBe(pair.publicKey);
  });
});

describe("v1a in Service-Signature", () => {
  it("signs the Standard Webhooks string `<id>.<t>.<body>` (the id the body's); node:crypto verifies it, and so do both verifiers", async () => {
    const keys = keyPair();
    const header = signPayload(BODY, keys.secretKey, { timestamp: T });
    expect(header).toMatch(/^t=1700000000,v1a=[A-Za-z0-9+/]{86}==$/);
    const v1a = header.slice(header.indexOf("v1a=") + 4);
    expect(nodeVerifies(`evt_1.${T}.${BODY}`, v1a, keys.publicKey)).toBe(true);
    // The same signature as the delivery's `webhook-signature` carries.
    expect(signStandardWebhook("evt_1", BODY, keys.secretKey, { timestamp: T })["webhook-signature"]).toBe(
      `v1a,${v1a}`,
    );
    // An id given is the one signed; a body without one needs it.
    const other = signPayload(BODY, keys.secretKey, { timestamp: T, id: "msg_2" });
    expect(nodeVerifies(`msg_2.${T}.${BODY}`, other.slice(other.indexOf("v1a=") + 4), keys.publicKey)).toBe(
      true,
    );
    expect(verifySignature(BODY, other, keys.publicKeyText, { ...AT, id: "msg_2" })).toBe(T);
    expect(codeOf(() => verifySignature(BODY, other, keys.publicKeyText, AT))).toBe("signature_mismatch");
    expect(() => signPayload("[1]", keys.secretKey, { timestamp: T })).toThrow(/delivery's id/);
    expect(await signPayloadAsync(BODY, keys.secretKey, { timestamp: T })).toBe(header);
    for (const body of [BODY, Buffer.from(BODY), new Uint8Array(Buffer.from(BODY))]) {
      expect(verifySignature(body, header, keys.publicKeyText, AT)).toBe(T);
      expect(await verifySignatureAsync(body, header, keys.publicKeyText, AT)).toBe(T);
    }
    expect(codeOf(() => verifySignature(`${BODY} `, header, keys.publicKeyText, AT))).toBe(
      "signature_mismatch",
    );
    expect(await codeOfAsync(() => verifySignatureAsync(`${BODY} `, header, keys.publicKeyText, AT))).toBe(
      "signature_mismatch",
    );
  });

  it("a header signed by node:crypto verifies; several keys give one item each, in order", () => {
    const [a, b] = [keyPair(), keyPair()];
    const bySelf = sign(null, Buffer.from(`evt_1.${T}.${BODY}`), b.privateKey).toString("base64");
    expect(verifySignature(BODY, ` t=${T} , v1a=${bySelf} ,`, [a.publicKeyText, b.publicKeyText], AT)).toBe(
      T,
    );
    const secret = "whsec_test";
    const header = signPayload(BODY, [secret, a.secretKey], { timestamp: T });
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64},v1a=[A-Za-z0-9+/]{86}==$/);
    expect(verifySignature(BODY, header, secret, AT)).toBe(T);
    expect(verifySignature(BODY, header, a.publicKeyText, AT)).toBe(T);
    expect(codeOf(() => verifySignature(BODY, header, b.publicKeyText, AT))).toBe("signature_mismatch");
  });

  it("an HMAC secret never passes a v1a-only header, nor a public key a v1-only one", () => {
    const keys = keyPair();
    const ed = signPayload(BODY, keys.secretKey, { timestamp: T });
    const hmac = signPayload(BODY, "whsec_test", { timestamp: T });
    expect(codeOf(() => verifySignature(BODY, ed, "whsec_test", AT))).toBe("signature_mismatch");
    expect(codeOf(() => verifySignature(BODY, hmac, keys.publicKeyText, AT))).toBe("signature_mismatch");
  });

  it("refuses malformed keys, a public key to sign with, and a malformed v1a", async () => {
    const keys = keyPair();
    const header = signPayload(BODY, keys.secretKey, { timestamp: T });
    expect(codeOf(() => verifySignature(BODY, header, "whpk_AAAA", AT))).toBe("invalid_key");
    expect(codeOf(() => verifySignature(BODY, header, "whsk_not base64", AT))).toBe("invalid_key");
    expect(codeOf(() => signPayload(BODY, keys.publicKeyText))).toBe("invalid_key");
    expect(await codeOfAsync(() => signPayloadAsync(BODY, keys.publicKeyText))).toBe("invalid_key");
    expect(codeOf(() => verifySignature(BODY, `t=${T},v1a=AAAA`, keys.publicKeyText, AT))).toBe(
      "invalid_signature_format",
    );
    expect(codeOf(() => verifySignature(BODY, `t=${T},v2=AAAA`, keys.publicKeyText, AT))).toBe(
      "missing_signature",
    );
  });
});
