import { describe, expect, it } from "vitest";
import {
  constructEvent,
  constructEventAsync,
  signPayload,
  signPayloadAsync,
  verifySignature,
  verifySignatureAsync,
  type WebhookVerificationError,
} from "../src/index.js";
import { codeOf, codeOfAsync } from "./codes.js";
import {
  eventError,
  eventText,
  NOW,
  optionsOf,
  payloadBytes,
  payloadForms,
  payloadText,
  signCases,
  vectors,
} from "./vectors.js";

describe.each(vectors)("vector: $name", (v) => {
  const options = optionsOf(v);
  const expectedEventError = eventError(v);

  it.each(payloadForms(v))("verifySignature, $kind body", ({ payload }) => {
    if ("ok" in v.expected) {
      expect(verifySignature(payload, v.header, v.secret, options)).toBe(v.expected.timestamp);
    } else {
      expect(codeOf(() => verifySignature(payload, v.header, v.secret, options))).toBe(v.expected.error);
    }
  });

  it.each(payloadForms(v))("verifySignatureAsync, $kind body", async ({ payload }) => {
    if ("ok" in v.expected) {
      await expect(verifySignatureAsync(payload, v.header, v.secret, options)).resolves.toBe(
        v.expected.timestamp,
      );
    } else {
      expect(await codeOfAsync(() => verifySignatureAsync(payload, v.header, v.secret, options))).toBe(
        v.expected.error,
      );
    }
  });

  it.each(payloadForms(v))("constructEvent and constructEventAsync, $kind body", async ({ payload }) => {
    if (expectedEventError === undefined) {
      const type = (v.event as { type: string }).type;
      expect(constructEvent(payload, v.header, v.secret, options).type).toBe(type);
      expect((await constructEventAsync(payload, v.header, v.secret, options)).type).toBe(type);
    } else {
      expect(codeOf(() => constructEvent(payload, v.header, v.secret, options))).toBe(expectedEventError);
      expect(await codeOfAsync(() => constructEventAsync(payload, v.header, v.secret, options))).toBe(
        expectedEventError,
      );
    }
  });
});

describe("signPayload", () => {
  it.each(signCases.flatMap((c) => payloadForms(c).map((f) => ({ ...c, ...f }))))(
    "matches the Python-made header ($kind body, t=$timestamp)",
    async ({ payload, secret, timestamp, header }) => {
      expect(signPayload(payload, secret, { timestamp })).toBe(header);
      expect(await signPayloadAsync(payload, secret, { timestamp })).toBe(header);
      expect(signPayload(payload, secret, { timestamp: new Date(timestamp * 1000 + 999) })).toBe(header);
    },
  );

  it("round-trips through every verifier with the real clock", async () => {
    const body = eventText("evt_1", "ticket.created", { id: "tkt_1", object: "ticket" });
    const header = signPayload(body, "whsec_round");
    const event = constructEvent(body, header, "whsec_round");
    expect(event.type).toBe("ticket.created");
    expect(
      (await constructEventAsync(body, await signPayloadAsync(body, "whsec_round"), "whsec_round")).id,
    ).toBe("evt_1");
    expect(verifySignature(Buffer.from(body), header, ["whsec_other", "whsec_round"])).toBe(
      Number(header.slice(2, header.indexOf(","))),
    );
  });

  // What the server sends during a secret rotation: one v1 per valid secret in one header, so a
  // receiver that knows only one of them (old or new) still verifies it.
  it.each(signCases.filter((c) => Array.isArray(c.secret)))(
    "signs one v1 per secret of a rotation, each verifiable alone ($secret.length secrets)",
    async ({ payload, secret, timestamp, header }) => {
      const body = payloadBytes(payload);
      const secrets = secret as string[];
      expect(signPayload(body, secrets, { timestamp })).toBe(header);
      expect(header.match(/,v1=/g)).toHaveLength(secrets.length);
      for (const one of secrets) {
        expect(verifySignature(body, header, one, { now: timestamp })).toBe(timestamp);
        await expect(verifySignatureAsync(body, header, one, { now: timestamp })).resolves.toBe(timestamp);
      }
      expect(codeOf(() => verifySignature(body, header, "whsec_none_of_them", { now: timestamp }))).toBe(
        "signature_mismatch",
      );
    },
  );

  it("refuses a bad timestamp or secret", () => {
    expect(() => signPayload("x", "whsec_a", { timestamp: -1 })).toThrow(TypeError);
    expect(() => signPayload("x", "whsec_a", { timestamp: Number.NaN })).toThrow(TypeError);
    expect(codeOf(() => signPayload("x", ""))).toBe("missing_secret");
  });
});

describe("options and errors", () => {
  const v = vectors.find((x) => x.name === "valid");
  if (!v) throw new Error("no valid vector");
  const body = payloadText(v.payload);

  it("takes now as a Date or as Unix seconds", () => {
    expect(verifySignature(body, v.header, v.secret, { now: new Date(NOW * 1000) })).toBe(NOW);
    expect(verifySignature(body, v.header, v.secret, { now: NOW + 300.9 })).toBe(NOW);
    expect(
      codeOf(() => verifySignature(body, v.header, v.secret, { now: new Date((NOW + 301) * 1000) })),
    ).toBe("timestamp_out_of_tolerance");
  });

  it("uses the system clock and a 300 s tolerance by default", () => {
    expect(codeOf(() => verifySignature(body, v.header, v.secret))).toBe("timestamp_out_of_tolerance");
    expect(verifySignature(body, v.header, v.secret, { toleranceSeconds: Number.POSITIVE_INFINITY })).toBe(
      NOW,
    );
  });

  it("rejects a nonsensical tolerance as a programming error", () => {
    expect(() => verifySignature(body, v.header, v.secret, { toleranceSeconds: -1 })).toThrow(TypeError);
  });

  it("says when the body was parsed before verification", async () => {
    // What a JavaScript caller behind a JSON body parser passes: the types refuse it, the code too.
    const parsed: object = JSON.parse(body);
    // @ts-expect-error a parsed body is no WebhookPayload
    const fromSync = codeOf(() => verifySignature(parsed, v.header, v.secret, { now: NOW }));
    // @ts-expect-error a parsed body is no WebhookPayload
    const fromAsync = await codeOfAsync(() => verifySignatureAsync(parsed, v.header, v.secret, { now: NOW }));
    expect([fromSync, fromAsync]).toEqual(["invalid_payload_type", "invalid_payload_type"]);
  });

  it("treats a non-string header as malformed", () => {
    // @ts-expect-error a JavaScript caller may pass the array some frameworks give repeated headers as
    const code = codeOf(() => verifySignature(body, ["t=1"], v.secret));
    expect(code).toBe("malformed_header");
  });

  it("builds an Error with a stable name, code and message", () => {
    try {
      verifySignature(body, "t=1,v1=00", v.secret);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ name: "WebhookVerificationError", code: "invalid_signature_format" });
      expect((error as Error).message).not.toContain(v.secret as string);
    }
  });

  it("keeps the JSON parse failure as the cause of invalid_payload", () => {
    const header = signPayload("{", "whsec_x", { timestamp: NOW });
    try {
      constructEvent("{", header, "whsec_x", { now: NOW });
      expect.unreachable();
    } catch (error) {
      expect((error as WebhookVerificationError).code).toBe("invalid_payload");
      expect((error as Error).cause).toBeInstanceOf(SyntaxError);
    }
  });

  it("hands over an event of a type this version does not know, whole", () => {
    const u = vectors.find((x) => x.name === "authentic event of a type this version does not know");
    if (!u) throw new Error("no unknown-type vector");
    const event = constructEvent(payloadText(u.payload), u.header, u.secret, { now: NOW });
    expect(event).toEqual(JSON.parse(payloadText(u.payload)));
    expect(event.type).toBe("invoice.payment_failed");
  });

  it("narrows the event by type", () => {
    const event = constructEvent(body, v.header, v.secret, { now: NOW });
    if (event.type === "contact.created") {
      const kind: "contact" = event.data.object;
      expect(kind).toBe("contact");
    } else {
      expect.unreachable();
    }
  });
});
