// The Standard Webhooks signer, checked by the `standardwebhooks` package itself (an independent
// implementation), including one signature per secret during a rotation and its failure cases.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signStandardWebhook } from "../src/index.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = `whsec_${Buffer.from("another secret of thirty-two bytes!").toString("base64")}`;
const BODY =
  '{"id":"evt_1","object":"event","type":"contact.created","created":1,"data":{"id":"con_1","object":"contact"}}';

describe("signStandardWebhook", () => {
  it("is verified by the standardwebhooks library, body as string and as bytes", () => {
    for (const payload of [BODY, Buffer.from(BODY)]) {
      const headers = signStandardWebhook("evt_1", payload, SECRET);
      expect(headers["webhook-id"]).toBe("evt_1");
      expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
    }
  });

  it("signs with every secret during a rotation; either verifies", () => {
    const headers = signStandardWebhook("evt_1", BODY, [OTHER, SECRET]);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(SECRET).verify(BODY, { ...headers })).not.toThrow();
    expect(() => new Webhook(OTHER).verify(BODY, { ...headers })).not.toThrow();
  });

  it("fails verification for another secret, another body, another id and an old timestamp", () => {
    const headers = signStandardWebhook("evt_1", BODY, SECRET);
    expect(() => new Webhook(OTHER).verify(BODY, { ...headers })).toThrow();
    expect(() => new Webhook(SECRET).verify(`${BODY} `, { ...headers })).toThrow();
    expect(() => new Webhook(SECRET).verify(BODY, { ...headers, "webhook-id": "evt_2" })).toThrow();
    const old = signStandardWebhook("evt_1", BODY, SECRET, { timestamp: Date.now() / 1000 - 600 });
    expect(() => new Webhook(SECRET).verify(BODY, { ...old })).toThrow();
  });

  it("uses the given timestamp", () => {
    expect(
      signStandardWebhook("evt_1", BODY, SECRET, { timestamp: 1_700_000_000 })["webhook-timestamp"],
    ).toBe("1700000000");
  });
});
