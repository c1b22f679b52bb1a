// `@deskline/webhook-verifier`: node:crypto for the sync functions, WebCrypto for the async twins.
// Everything of `/web` (types, errors, async API) plus the sync functions.

export { type DeliveryToSign, deliveryHeaders } from "./delivery-headers.js";
export { generateSigningKeyPair, type SigningKeyPair } from "./key-pair.js";
export { signStandardWebhook, verifyStandardWebhook } from "./standard-webhooks.js";
export { constructEvent, signPayload, verifySignature } from "./verify.js";
export * from "./web.js";
