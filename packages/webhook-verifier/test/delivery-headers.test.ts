// deliveryHeaders: what the server's deliveries and `deskline listen` send, checked by this
// package's verifier and by the independent `standardwebhooks` library.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { deliveryHeaders, verifySignature } from "../src/index.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD = `whsec_${Buffer.from("the secret being rotated out now!").toString("base64")}`;
const BODY =
  '{"id":"evt_1","object":"event","type":"contact.created","created":1,"data":{"id":"con_1","object":"contact"}}';
const delivery = {
  payload: BODY,
  eventId: "evt_1",
  eventType: "contact.created",
  secret: SECRET,
  userAgent: "Deskline-Webhooks/9.9.9",
};

describe("deliveryHeaders", () => {
  it("carries both schemes, the event's names and the user agent; both verify", () => {
    const headers = deliveryHeaders(delivery);
    expect(Object.keys(headers).sort()).toEqual([
      "content-type",
      "service-delivery",
      "service-event",
      "service-signature",
      "user-agent",
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["user-agent"]).toBe("Deskline-Webhooks/9.9.9");
    expect(headers["service-event"]).toBe("contact.created");
    expect(headers["service-delivery"]).toBe("evt_1");
    expect(headers["webhook-id"]).toBe("evt_1");
    expect(() => verifySignature(BODY, headers["service-signature"], SECRET)).not.toThrow();
    expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
  });

  it("signs at the given timestamp, with every secret during a rotation", () => {
    const at = new Date("2026-01-02T03:04:05Z");
    const headers = deliveryHeaders({ ...delivery, secret: [SECRET, OLD] }, { timestamp: at });
    expect(headers["service-signature"]).toMatch(/^t=1767323045,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(headers["webhook-timestamp"]).toBe("1767323045");
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
  });
});
