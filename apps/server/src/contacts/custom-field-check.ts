// How one request checks the `custom_fields` its contact writes carry: the workspace's
// definitions read once (one indexed find), the `undefined_custom_fields` setting read only when
// a write sends a key no definition names (docs/decisions.md, "Typed custom fields").
import { AppError } from "../platform/errors.js";
import type { SettingsOnce } from "../workspaces/workspaces.js";
import type { CustomFieldDefinition, CustomFieldDefinitions } from "./custom-field-definitions.js";
import { checkCustomFields, undefinedKeyError, type WriteKind } from "./custom-field-values.js";

export interface CustomFieldStores {
  customFieldDefinitions: Pick<CustomFieldDefinitions, "byKey">;
}

/** One request's check of the writes it makes. */
export interface CustomFieldCheck {
  definitions: ReadonlyMap<string, CustomFieldDefinition>;
  /** Throws the 400 of the first value the workspace refuses. */
  check(values: Record<string, unknown> | null | undefined, kind: WriteKind): Promise<void>;
  /** For a write about to create a contact whose values `check` passed: its missing required key's 400. */
  refuseCreate(values: Record<string, unknown> | null | undefined): AppError | undefined;
}

export async function customFieldCheck(
  stores: CustomFieldStores,
  workspaceId: string,
  /** The request's workspace settings, shared with its phone rules: one read for both. */
  settings: SettingsOnce,
): Promise<CustomFieldCheck> {
  const definitions = await stores.customFieldDefinitions.byKey(workspaceId);
  return {
    definitions,
    async check(values, kind) {
      const [undefinedKey] = checkCustomFields(definitions, values, kind);
      if (undefinedKey === undefined) return;
      if ((await settings()).undefined_custom_fields === "refuse") throw undefinedKeyError(undefinedKey);
    },
    refuseCreate(values) {
      try {
        checkCustomFields(definitions, values, "create");
        return undefined;
      } catch (error) {
        if (error instanceof AppError) return error;
        throw error;
      }
    },
  };
}
