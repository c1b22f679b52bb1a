import type { Migration } from "../platform/database/migrations.js";
import { retireAgendaLaneJobs } from "./001-retire-agenda-lane-jobs.js";
import { keySettledDeliveries } from "./002-key-settled-deliveries.js";
import { attemptsUniquePerDelivery } from "./003-attempts-unique-per-delivery.js";
import { apiKeysUniqueInWorkspace } from "./004-api-keys-unique-in-workspace.js";
import { endpointsHaveCustomHeaders } from "./005-endpoints-have-custom-headers.js";
import { endpointsDisabledReasonCodes } from "./006-endpoints-disabled-reason-codes.js";
import { contactsPhonesInE164 } from "./007-contacts-phones-in-e164.js";
import { contactsSearchKeys } from "./008-contacts-search-keys.js";

/**
 * Every migration, in order (docs/decisions.md, "Migrations"). A new one goes at the end with the
 * next number; a released one is never edited. Each works on the collections directly, not through
 * the stores, and imports nothing but the platform: it upgrades from shapes the stores no longer know.
 */
export const MIGRATIONS: readonly Migration[] = [
  retireAgendaLaneJobs,
  keySettledDeliveries,
  attemptsUniquePerDelivery,
  apiKeysUniqueInWorkspace,
  endpointsHaveCustomHeaders,
  endpointsDisabledReasonCodes,
  contactsPhonesInE164,
  contactsSearchKeys,
];
