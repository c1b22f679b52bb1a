import type { Events } from "../events/events.js";
import { newEvent } from "../events/model.js";
import { notFound } from "../platform/errors.js";
import type { IdempotencyKeys } from "../platform/idempotency/idempotency-keys.js";
import type { Logger } from "../platform/logger.js";
import type { Tombstones } from "../records/tombstones.js";
import type { Schema } from "../spec/types.js";
import type { DeliveryAttempts } from "../webhooks/deliveries/attempts.js";
import type { Contacts } from "./contacts.js";

/**
 * Erasing a contact's personal data everywhere it is kept (`eraseContact`; docs/decisions.md,
 * "Erasure"). Without transactions, the steps are ordered so that a repeat finishes what a failure
 * left, and each is idempotent:
 *
 * 1. The tombstone records the erasure, with `contact.erased` inside (one write; only the first
 *    erasure writes it), so the erasure is decided before anything is scrubbed.
 * 2. The contact's document goes, the events it still carries relayed first.
 * 3. The copies are scrubbed, found by the contact's id (its values are gone after step 2): the
 *    `data` of events about it (and of contacts a merge moved into it), the receivers' answers to
 *    their delivery attempts, the stored answers of idempotent requests that carried it.
 *
 * Each store scrubs its own collection. Tickets and conversations hold only its id (`contact_id`),
 * deliveries and recoveries only event ids: they keep them, as the marker does.
 */

export type ErasedContact = Schema<"ErasedContact">;

export interface ErasureDeps {
  contacts: Pick<Contacts, "exists" | "removeErased">;
  tombstones: Pick<Tombstones, "find" | "markErased" | "mergedInto">;
  events: Pick<Events, "eraseData">;
  deliveryAttempts: Pick<DeliveryAttempts, "eraseAnswers">;
  idempotencyKeys: Pick<IdempotencyKeys, "eraseAnswers">;
}

/** What is left of an erased contact, wherever it was: its id and when it was erased. */
export const erasedContact = (id: string, at: Date): ErasedContact => ({
  id,
  object: "contact",
  erased: true,
  erased_at: at.toISOString(),
});

/** What a replay of a request whose answer carried an erased contact is told instead. */
const REPLAY_ADVICE =
  "its answer carried a contact that was erased since, and is no longer kept. Read the records again.";

/** Erases contact `id` of the workspace (see the module comment); answers the marker. */
export async function eraseContact(
  deps: ErasureDeps,
  logger: Logger,
  workspaceId: string,
  id: string,
): Promise<ErasedContact> {
  const existed = await deps.contacts.exists(workspaceId, id);
  if (!existed && !(await deps.tombstones.find(workspaceId, id))) throw notFound("contact", id);
  const erasedAt = await deps.tombstones.markErased(workspaceId, id, (at) =>
    newEvent(workspaceId, "contact.erased", erasedContact(id, at), undefined, at),
  );
  // Null: the id is a ticket's tombstone or another workspace's, exactly as missing.
  if (!erasedAt) throw notFound("contact", id);
  const marker = erasedContact(id, erasedAt);
  const removed = await deps.contacts.removeErased(workspaceId, id);
  const counts = { events: 0, attempts: 0, idempotency_keys: 0 };
  // A merge's losers were the same person: their events carry its older data.
  for (const contactId of [id, ...(await deps.tombstones.mergedInto(workspaceId, id))]) {
    const scrubbed = await scrubCopies(deps, workspaceId, contactId, { ...marker, id: contactId });
    counts.events += scrubbed.events;
    counts.attempts += scrubbed.attempts;
    counts.idempotency_keys += scrubbed.idempotency_keys;
  }
  // The audit line: ids and counts, never the data.
  logger.info(
    { workspace_id: workspaceId, contact_id: id, erased_at: marker.erased_at, removed, scrubbed: counts },
    "contact erased",
  );
  return marker;
}

/** Step 3 for one contact id: every copy its stores hold, replaced by `marker` or emptied. */
async function scrubCopies(deps: ErasureDeps, workspaceId: string, id: string, marker: ErasedContact) {
  const events = await deps.events.eraseData(workspaceId, { object: "contact", id }, marker);
  const attempts = await deps.deliveryAttempts.eraseAnswers(workspaceId, events.ids);
  const idempotencyKeys = await deps.idempotencyKeys.eraseAnswers(
    workspaceId,
    (body) => carriesContact(body, id),
    REPLAY_ADVICE,
  );
  return { events: events.erased, attempts, idempotency_keys: idempotencyKeys };
}

/** Does `value` hold contact `id` as a resource (not its id alone, nor its erased marker), at any depth? */
export function carriesContact(value: unknown, id: string): boolean {
  if (Array.isArray(value)) return value.some((item) => carriesContact(item, id));
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  if (record.object === "contact" && record.id === id && record.erased !== true) return true;
  return Object.values(record).some((item) => carriesContact(item, id));
}
