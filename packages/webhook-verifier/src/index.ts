// `@deskline/webhook-verifier`: node:crypto for the sync functions, WebCrypto for the async twins.
// Everything of `/web` (types, errors, async API) plus the sync functions.

export { constructEvent, signPayload, verifySignature } from "./verify.js";
export * from "./web.js";
