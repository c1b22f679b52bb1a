import { AppError, DomainError } from "../platform/errors.js";
import { type ContactDoc, type ContactInput, type Contacts, emailKey, externalIdKey } from "./contacts.js";
import { type PhoneRules, phoneFields } from "./phone.js";

/**
 * Batch upsert of contacts (`batchUpsertContacts`): each item finds its contact by a match key,
 * then is created, updated with PATCH semantics, or left alone. Built only from the contact
 * module's own create and update, so every rule (uniqueness by index, version-checked updates, the
 * event each write records) holds item by item, and one item's failure is its own.
 *
 * Concurrent batches on the same contacts: two creations of one match value cannot both succeed
 * (the unique index refuses the second), and the loser reads again and updates the winner;
 * updates apply to the version they were decided on, so none overwrites another.
 */

export type BatchItemResult =
  | { status: "created" | "updated" | "unchanged"; doc: ContactDoc }
  | { status: "error"; error: DomainError | AppError };

/** How items find their contact: by email, by phone or by one external-id system. */
export interface MatchKey {
  /** `email`, `phone` or `external_ids.<system>`, as the request names it (and as errors name the field). */
  param: string;
  /** The item's value of that key, or undefined when it has none. */
  valueOf(item: ContactInput): string | undefined;
  /** What that value is found by; throws the item's error when the value cannot be one. */
  keyOf(workspaceId: string, value: string): string;
  /** The contacts holding these keys, by key: one read for the whole batch. */
  findAll(contacts: Contacts, workspaceId: string, keys: string[]): Promise<Map<string, ContactDoc>>;
  /** The contact holding this key, if any. */
  findOne(contacts: Contacts, workspaceId: string, key: string): Promise<ContactDoc | null>;
}

/** Keys stored as unique keys (contacts/unique-keys.ts): email and external ids. */
const byUniqueKey = {
  findAll: (contacts: Contacts, _workspaceId: string, keys: string[]) => contacts.findByUniqueKeys(keys),
  findOne: (contacts: Contacts, _workspaceId: string, key: string) => contacts.findByUniqueKey(key),
};

/**
 * `match: phone`: the E.164 form, read with the request's rules. Phones are not unique (people
 * share one), so this key is a lookup, not an index's promise: where several contacts have the
 * number the oldest is the match, and two concurrent batches may both create one
 * (docs/decisions.md, "Phones in E.164").
 */
function phoneMatch(rules: PhoneRules): MatchKey {
  return {
    param: "phone",
    valueOf: (item) => (typeof item.phone === "string" ? item.phone : undefined),
    keyOf: (_workspaceId, value) => {
      // A match value must read as a number, however lenient the workspace is with stored ones.
      const { phone_e164 } = phoneFields(value, { ...rules, validation: "strict" });
      return phone_e164 as string;
    },
    findAll: (contacts, workspaceId, keys) => contacts.findByPhones(workspaceId, keys),
    findOne: async (contacts, workspaceId, key) =>
      (await contacts.findByPhones(workspaceId, [key])).get(key) ?? null,
  };
}

export function parseMatchKey(match: string, rules: PhoneRules): MatchKey {
  if (match === "phone") return phoneMatch(rules);
  if (match === "email") {
    return {
      param: match,
      valueOf: (item) => (typeof item.email === "string" ? item.email : undefined),
      keyOf: (workspaceId, value) => emailKey(workspaceId, value.toLowerCase()).key,
      ...byUniqueKey,
    };
  }
  const system = match.slice("external_ids.".length);
  return {
    param: match,
    valueOf: (item) => {
      const value = (item.external_ids as Record<string, unknown> | null | undefined)?.[system];
      return typeof value === "string" ? value : undefined;
    },
    keyOf: (workspaceId, value) => externalIdKey(workspaceId, system, value).key,
    ...byUniqueKey,
  };
}

/** Why an item may not create its contact, if it may not (a required custom field it lacks). */
export type RefuseCreate = (item: ContactInput) => AppError | undefined;

// A contact created or deleted between our read and our write sends the item round again; a few
// rounds cover any realistic race, then the item reports a conflict like a contended PATCH.
const ROUNDS = 5;

/** How many items of one batch are written at once. */
const WORKERS = 8;

/** One item: find by the match key, then create, update or leave it. */
async function upsertOne(
  contacts: Contacts,
  workspaceId: string,
  match: MatchKey,
  key: string,
  item: ContactInput,
  { rules, refuseCreate }: { rules: PhoneRules; refuseCreate: RefuseCreate },
  /** What the batch's one read found for this key: the first round trusts it. */
  known?: ContactDoc | null,
): Promise<BatchItemResult> {
  for (let round = 0; round < ROUNDS; round++) {
    const existing =
      round === 0 && known !== undefined ? known : await match.findOne(contacts, workspaceId, key);
    try {
      if (!existing) {
        if (typeof item.name !== "string") {
          throw new DomainError("invalid", "parameter_missing", "`name` is required to create a contact.", {
            param: "name",
          });
        }
        const refused = refuseCreate(item);
        if (refused) return { status: "error", error: refused };
        return { status: "created", doc: await contacts.create(workspaceId, item, rules) };
      }
      const { doc, previous } = await contacts.update(workspaceId, existing._id, item, rules);
      return { status: Object.keys(previous).length ? "updated" : "unchanged", doc };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // Someone created a contact with this very value first: update that one instead.
      const lostCreate = !existing && error.kind === "conflict" && error.param === match.param;
      // The matched contact was deleted meanwhile: create it anew; or others kept changing it
      // for a while (each update is version-checked): try again from a fresh read.
      const lostContact = existing && ["resource_missing", "concurrent_update"].includes(error.code);
      if (!lostCreate && !lostContact) return { status: "error", error };
    }
  }
  return {
    status: "error",
    error: new DomainError(
      "conflict",
      "concurrent_update",
      "The contact is being changed by other requests; retry.",
    ),
  };
}

/**
 * The items by their match key, in input order; each item that cannot be matched (invalid, no
 * value for the key, a phone that does not read) already has its error among the results.
 */
function queueItems(
  workspaceId: string,
  match: MatchKey,
  items: (ContactInput | AppError)[],
  rules: PhoneRules,
): { results: BatchItemResult[]; queues: Map<string, number[]> } {
  const results: BatchItemResult[] = new Array(items.length);
  const queues = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (item instanceof AppError) {
      results[index] = { status: "error", error: item };
      return;
    }
    const value = match.valueOf(item);
    if (value === undefined) {
      const error = new DomainError(
        "invalid",
        "parameter_missing",
        `\`${match.param}\` is required: it is how this batch matches contacts.`,
        { param: match.param },
      );
      results[index] = { status: "error", error };
      return;
    }
    try {
      // An item whose phone does not read fails alone, before the batch's one insert.
      phoneFields(item.phone, rules);
      const key = match.keyOf(workspaceId, value);
      queues.set(key, [...(queues.get(key) ?? []), index]);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      results[index] = { status: "error", error };
    }
  });
  return { results, queues };
}

/**
 * Applies the items (invalid ones already replaced by their error) and answers one result per item,
 * in input order. Items with the same match value run one after another in input order; the rest
 * run a few at a time.
 */
export async function upsertBatch(
  contacts: Contacts,
  workspaceId: string,
  match: MatchKey,
  items: (ContactInput | AppError)[],
  /** How the items' phones read (contacts/phone.ts). */
  rules: PhoneRules,
  /** Why an item may not create its contact (a required custom field it lacks), if it may not. */
  refuseCreate: RefuseCreate = () => undefined,
): Promise<BatchItemResult[]> {
  const { results, queues } = queueItems(workspaceId, match, items, rules);
  // One read for every match value, and one insert for the first item of every value no contact
  // holds yet: a batch of new contacts costs two round trips (and the events' two), not 200.
  const found = await match.findAll(contacts, workspaceId, [...queues.keys()]);
  const fresh = [...queues].filter(([key, [first]]) => {
    const item = items[first as number] as ContactInput;
    return !found.has(key) && typeof item.name === "string" && !refuseCreate(item);
  });
  const created = await contacts.createMany(
    workspaceId,
    fresh.map(([, [first]]) => items[first as number] as ContactInput),
    rules,
  );
  // Keys whose state the batch's read no longer tells: just created, or refused by the index.
  const moved = new Set<string>();
  fresh.forEach(([key, indexes], position) => {
    moved.add(key);
    const doc = created[position];
    // Refused by a unique index (taken meanwhile): its item goes the one-by-one way below.
    if (doc) results[indexes.shift() as number] = { status: "created", doc };
  });

  // The rest one by one, a few workers rather than one promise per item: a batch of 100 must not
  // flood the database (on the embedded fallback every conditional update scans) and starve
  // concurrent requests.
  const pending = [...queues].filter(([, indexes]) => indexes.length > 0);
  const worker = async () => {
    for (let next = pending.shift(); next; next = pending.shift()) {
      const [key, indexes] = next;
      for (const [n, index] of indexes.entries()) {
        // Only the first write of a key may trust the batch's read; later ones read anew.
        const known = n === 0 && !moved.has(key) ? (found.get(key) ?? null) : undefined;
        const item = items[index] as ContactInput;
        results[index] = await upsertOne(
          contacts,
          workspaceId,
          match,
          key,
          item,
          { rules, refuseCreate },
          known,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return results;
}
