import { contactScenarios } from "./contacts.js";
import { conversationScenarios } from "./conversations.js";
import type { Scenario } from "./scenario.js";
import { searchScenarios } from "./search.js";
import { ticketScenarios } from "./tickets.js";

/**
 * Every scenario, in the order they run (each on a database of its own, so the order does not
 * change the numbers). To benchmark another resource, export a `Scenario[]` from a file beside
 * this one (see contacts.ts or tickets.ts: method, path, `body` or `bodyOf`, an optional `seed`,
 * and the driver `baseline`) and spread it in here.
 */
export const scenarios: Scenario[] = [
  ...contactScenarios,
  ...searchScenarios,
  ...ticketScenarios,
  ...conversationScenarios,
];
