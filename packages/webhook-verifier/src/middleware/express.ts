// `@deskline/webhook-verifier/express`: the node middleware (./node.ts), with Express's requests
// typed: `req.webhookEvent` is the verified event in the handlers after it, under strict
// TypeScript too. An entry of its own, as /fastify is: the augmentation is declared where an
// Express user imports it, once, not in every project that uses node http.
import type { DesklineEvent } from "../event.js";

export { type NodeWebhookOptions, type NodeWebhookRequest, nodeWebhookMiddleware } from "./node.js";

declare global {
  // Express's own place for what middleware adds to its requests (its `Request` extends
  // `Express.Request`); a global namespace, so nothing here needs Express's types to resolve.
  namespace Express {
    interface Request {
      /**
       * The verified Deskline event, set by `nodeWebhookMiddleware` before the handlers after it
       * run; absent on routes without it (as `request.webhookEvent` of the Fastify plugin).
       */
      webhookEvent: DesklineEvent;
    }
  }
}
