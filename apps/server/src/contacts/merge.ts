import type { Conversations } from "../conversations/conversations.js";
import { DomainError, unknownReference } from "../platform/errors.js";
import type { Tombstones } from "../records/tombstones.js";
import type { Tickets } from "../tickets/tickets.js";
import { CONTACT_FIELDS, type ContactDoc, type ContactInput, type Contacts } from "./contacts.js";

/**
 * Merging duplicate contacts into one (`mergeContacts`). Without transactions, the steps are
 * ordered so that a crash anywhere leaves a state the same merge, retried, completes:
 *
 * 1. Read and plan; a conflict is a 409 before anything is written.
 * 2. Each merged contact is marked `merged_into` and gives up its unique keys (its fields stay).
 * 3. Its tickets and conversations are re-pointed to the survivor.
 * 4. The survivor takes the union (one version-checked update, one `contact.updated`).
 * 5. Each merged contact is deleted, its tombstone naming the survivor first.
 * 6. Tickets and conversations are re-pointed once more (any made in between).
 *
 * A retry finds merged contacts already gone by their tombstone (`merged_into` the survivor), the
 * others where they were left, with all their values: so it plans the same union and goes on.
 */

export interface MergeRequest {
  contact_ids: string[];
  prefer?: string;
}

export interface MergeDeps {
  contacts: Contacts;
  tickets: Pick<Tickets, "repoint">;
  conversations: Pick<Conversations, "repoint">;
  tombstones: Pick<Tombstones, "find">;
}

type Scalar = ContactDoc[keyof ContactDoc];

/** Fields the merge treats on their own; every other field is filled when the survivor's is empty. */
const SPECIAL = new Set([
  "name",
  "email",
  "tags",
  "segments",
  "external_ids",
  "custom_fields",
  "do_not_contact",
  "marketing_consent",
]);

const isEmpty = (value: Scalar | undefined) =>
  value === null || value === undefined || (typeof value === "string" && value === "");

const union = (lists: string[][]) => [...new Set(lists.flat())];

/**
 * The values of one kind (an external-id system, or the email) across the contacts, in order;
 * the one that wins, or a conflict when several differ and `preferred` holds none of them.
 */
function resolve(
  values: { id: string; value: string | null | undefined }[],
  preferred: string | undefined,
): { value?: string; conflict?: string[] } {
  const present = values.filter((v): v is { id: string; value: string } => !isEmpty(v.value));
  const distinct = [...new Set(present.map((v) => v.value))];
  if (distinct.length <= 1) return { value: distinct[0] };
  const winner = present.find((v) => v.id === preferred);
  if (winner) return { value: winner.value };
  return { conflict: present.map((v) => `${v.id} has '${v.value}'`) };
}

/**
 * What the survivor becomes: a PATCH body made from its current state and the merged contacts
 * (in fill order). Throws 409 merge_conflict naming every conflicting system.
 */
export function mergePlan(
  survivor: ContactDoc,
  merged: ContactDoc[],
  prefer: string | undefined,
): ContactInput {
  const all = [survivor, ...merged];
  const patch: Record<string, unknown> = {};
  const conflicts: { param: string; detail: string }[] = [];

  const systems = union(all.map((c) => Object.keys(c.external_ids ?? {})));
  const externalIds: Record<string, string> = {};
  for (const system of systems) {
    const { value, conflict } = resolve(
      all.map((c) => ({ id: c._id, value: c.external_ids?.[system] })),
      prefer,
    );
    if (conflict) conflicts.push({ param: `external_ids.${system}`, detail: conflict.join(", ") });
    else if (value !== undefined && value !== survivor.external_ids?.[system]) externalIds[system] = value;
  }
  if (Object.keys(externalIds).length) patch.external_ids = externalIds;

  // The survivor's email stays (a contact has one); only an empty one is filled.
  if (isEmpty(survivor.email)) {
    const { value, conflict } = resolve(
      merged.map((c) => ({ id: c._id, value: c.email })),
      prefer,
    );
    if (conflict) conflicts.push({ param: "email", detail: conflict.join(", ") });
    else if (value !== undefined) patch.email = value;
  }
  if (conflicts.length) {
    throw new DomainError(
      "conflict",
      "merge_conflict",
      `The contacts hold different values: ${conflicts.map((c) => `${c.param} (${c.detail})`).join("; ")}. ` +
        "Pass `prefer` with the id of the contact whose values win.",
      { param: conflicts[0]?.param },
    );
  }

  for (const field of ["tags", "segments"] as const) {
    const joined = union(all.map((c) => c[field] ?? []));
    if (joined.length !== (survivor[field] ?? []).length) patch[field] = joined;
  }
  const customFields: Record<string, unknown> = {};
  for (const contact of merged) {
    for (const [key, value] of Object.entries(contact.custom_fields ?? {})) {
      if (!(key in (survivor.custom_fields ?? {})) && !(key in customFields)) customFields[key] = value;
    }
  }
  if (Object.keys(customFields).length) patch.custom_fields = customFields;
  // Once any of them asked not to be contacted, the merged person has.
  if (!survivor.do_not_contact && merged.some((c) => c.do_not_contact)) patch.do_not_contact = true;

  for (const field of CONTACT_FIELDS) {
    if (SPECIAL.has(field) || !isEmpty(survivor[field] as Scalar)) continue;
    const donor = merged.find((c) => !isEmpty(c[field] as Scalar));
    if (donor) patch[field] = donor[field];
  }
  return patch as ContactInput;
}

/** Merges `request.contact_ids` into `survivorId`; answers the survivor as it ends up. */
export async function mergeContacts(
  deps: MergeDeps,
  workspaceId: string,
  survivorId: string,
  request: MergeRequest,
  /** Refuses a plan whose values the workspace's rules do not take (custom field types), before any write. */
  checkPlan: (plan: ContactInput) => Promise<void> = async () => {},
): Promise<ContactDoc> {
  const { contacts } = deps;
  const ids = request.contact_ids;
  // The survivor first: another workspace's id is 404 whatever the body says.
  const survivor = await contacts.get(workspaceId, survivorId);
  if (ids.includes(survivorId)) {
    throw new DomainError(
      "invalid",
      "parameter_invalid",
      "`contact_ids` must not include the surviving contact.",
      { param: "contact_ids" },
    );
  }
  if (request.prefer !== undefined && request.prefer !== survivorId && !ids.includes(request.prefer)) {
    throw new DomainError(
      "invalid",
      "parameter_invalid",
      "`prefer` must be the surviving contact or one of `contact_ids`.",
      { param: "prefer" },
    );
  }
  const merged = await pending(deps, workspaceId, survivorId, ids);
  // The fill order: the preferred contact's values first.
  merged.sort((a, b) => Number(b._id === request.prefer) - Number(a._id === request.prefer));
  // A conflict or a value the workspace refuses stops it here, before any write.
  await checkPlan(mergePlan(survivor, merged, request.prefer));

  const released: ContactDoc[] = [];
  for (const contact of merged)
    released.push(await contacts.releaseForMerge(workspaceId, contact._id, survivorId));
  const movedIds = merged.map((c) => c._id);
  await repoint(deps, workspaceId, movedIds, survivorId);
  // Planned again on the survivor as the update reads it, so a concurrent change is kept.
  // A phone taken from a merged contact (the first in fill order that has one, as mergePlan
  // fills) is read in its own country and kept however it reads: it was accepted once already
  // (docs/decisions.md, "Phones in E.164").
  const phoneDonor = released.find((c) => !isEmpty(c.phone as Scalar));
  const { doc } = await contacts.update(
    workspaceId,
    survivorId,
    (current) => mergePlan(current, released, request.prefer),
    { country: phoneDonor?.phone_country ?? null, validation: "lenient" },
  );
  for (const id of movedIds) {
    try {
      await contacts.delete(workspaceId, id, survivorId);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === "resource_missing")) throw error;
    }
  }
  await repoint(deps, workspaceId, movedIds, survivorId);
  return doc;
}

/**
 * The contacts still to merge: each exists, or was merged into this survivor already (skipped).
 * Any other id is a bad value of the body, as a reference to a missing contact is elsewhere
 * (`contact_id` of a ticket or a conversation): `400 parameter_invalid`; only the path's own
 * contact answers 404.
 */
async function pending(
  { contacts, tombstones }: MergeDeps,
  workspaceId: string,
  survivorId: string,
  ids: string[],
): Promise<ContactDoc[]> {
  const out: ContactDoc[] = [];
  for (const id of ids) {
    try {
      const contact = await contacts.get(workspaceId, id);
      if (contact.merged_into !== undefined && contact.merged_into !== survivorId) {
        throw new DomainError(
          "conflict",
          "merge_conflict",
          `Contact '${id}' is being merged into '${contact.merged_into}'; finish that merge first.`,
          { param: "contact_ids" },
        );
      }
      out.push(contact);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === "resource_missing")) throw error;
      const tombstone = await tombstones.find(workspaceId, id);
      if (tombstone?.merged_into !== survivorId) throw unknownReference("contact_ids", "contact", id);
    }
  }
  return out;
}

async function repoint(deps: MergeDeps, workspaceId: string, fromIds: string[], toId: string): Promise<void> {
  if (fromIds.length === 0) return;
  await deps.tickets.repoint(workspaceId, fromIds, toId);
  await deps.conversations.repoint(workspaceId, fromIds, toId);
}
