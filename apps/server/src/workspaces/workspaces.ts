import type { Collection, Db } from "mongodb";
import { newId } from "../platform/ids.js";

/** How a workspace's contacts read phone numbers (docs/decisions.md, "Phones in E.164"). */
export interface PhoneSettings {
  /** ISO 3166-1 alpha-2: the country a number without `+` is read in; null: none. */
  default_phone_country: string | null;
  phone_validation: "strict" | "lenient";
}

/**
 * What a contact write does with a `custom_fields` key no definition names
 * (docs/decisions.md, "Typed custom fields"): kept untyped, or refused.
 */
export type UndefinedCustomFields = "keep" | "refuse";

/** The settings a workspace is created and updated with (the admin API). */
export interface WorkspaceSettings extends PhoneSettings {
  undefined_custom_fields: UndefinedCustomFields;
}

export interface WorkspaceDoc extends Partial<WorkspaceSettings> {
  _id: string;
  name: string;
  created_at: Date;
}

/** A workspace's settings as they read; workspaces stored before they existed have the defaults. */
export const phoneSettingsOf = (doc: Partial<PhoneSettings> | null): PhoneSettings => ({
  default_phone_country: doc?.default_phone_country ?? null,
  phone_validation: doc?.phone_validation ?? "strict",
});

/** `keep` for workspaces stored before the setting existed: nothing that worked breaks. */
export const undefinedCustomFieldsOf = (doc: Partial<WorkspaceSettings> | null): UndefinedCustomFields =>
  doc?.undefined_custom_fields ?? "keep";

export function toWorkspace(doc: WorkspaceDoc) {
  return {
    id: doc._id,
    object: "workspace" as const,
    name: doc.name,
    ...phoneSettingsOf(doc),
    undefined_custom_fields: undefinedCustomFieldsOf(doc),
    created_at: doc.created_at.toISOString(),
  };
}

export type WorkspaceChanges = Partial<Pick<WorkspaceDoc, "name"> & WorkspaceSettings>;

export class Workspaces {
  private readonly collection: Collection<WorkspaceDoc>;
  constructor(db: Db) {
    this.collection = db.collection<WorkspaceDoc>("workspaces");
  }

  async ensureIndexes(): Promise<void> {}

  async create(name: string, settings: Partial<WorkspaceSettings> = {}): Promise<WorkspaceDoc> {
    const doc: WorkspaceDoc = {
      _id: newId("ws"),
      name,
      ...phoneSettingsOf(settings),
      undefined_custom_fields: undefinedCustomFieldsOf(settings),
      created_at: new Date(),
    };
    await this.collection.insertOne(doc);
    return doc;
  }

  /** Sets the fields given; null when there is no such workspace. */
  update(id: string, changes: WorkspaceChanges): Promise<WorkspaceDoc | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: "after" });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.collection.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
  }

  /**
   * The settings a contact write reads: how it reads phones, and whether it keeps custom fields
   * no definition names. One `_id` probe for both, made only by a write that needs one of them
   * (`settingsOnce`).
   */
  async contactSettings(id: string): Promise<ContactSettings> {
    const projection = { default_phone_country: 1, phone_validation: 1, undefined_custom_fields: 1 };
    const doc = await this.collection.findOne({ _id: id }, { projection });
    return { ...phoneSettingsOf(doc), undefined_custom_fields: undefinedCustomFieldsOf(doc) };
  }
}

/** What a contact write may read of its workspace's settings (`Workspaces.contactSettings`). */
export interface ContactSettings extends PhoneSettings {
  undefined_custom_fields: UndefinedCustomFields;
}

/** One request's read of its workspace's contact settings: made at its first need, then shared. */
export type SettingsOnce = () => Promise<ContactSettings>;

export function settingsOnce(workspaces: Pick<Workspaces, "contactSettings">, id: string): SettingsOnce {
  let read: Promise<ContactSettings> | undefined;
  return () => {
    read ??= workspaces.contactSettings(id);
    return read;
  };
}
