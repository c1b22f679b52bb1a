// The custom field definitions' operations (`/open/v1/custom-field-definitions`): parse → call →
// shape; the store is contacts/custom-field-definitions.ts, the rules custom-field-values.ts.
import { AppError } from "../platform/errors.js";
import type { Handler } from "../platform/http/operation.js";
import { mountHandlers, type RouteKit, workspaceOf } from "../platform/http/route-kit.js";
import {
  type CustomFieldDefinitionDoc,
  type CustomFieldDefinitions,
  toCustomFieldDefinition,
} from "./custom-field-definitions.js";

type Kit = RouteKit<{ customFieldDefinitions: CustomFieldDefinitions }>;

export function customFieldRoutes(kit: Kit): void {
  mountHandlers(kit, {
    listCustomFieldDefinitions,
    createCustomFieldDefinition,
    getCustomFieldDefinition,
    updateCustomFieldDefinition,
    deleteCustomFieldDefinition,
  });
}

/** `options` belong to a `select` field, which needs them; any other type takes none. */
function assertOptions(
  type: CustomFieldDefinitionDoc["type"],
  options: string[] | undefined,
  creating: boolean,
) {
  if (type === "select" && creating && options === undefined) {
    throw new AppError(
      400,
      "parameter_missing",
      "`options` is required with type `select`: the values it takes.",
      {
        param: "options",
      },
    );
  }
  if (type !== "select" && options !== undefined) {
    throw new AppError(
      400,
      "parameter_invalid",
      `\`options\` is only for type \`select\`, not \`${type}\`.`,
      {
        param: "options",
      },
    );
  }
}

function listCustomFieldDefinitions({ store }: Kit): Handler<"listCustomFieldDefinitions"> {
  return async ({ ctx }) => {
    const docs = await store.customFieldDefinitions.list(workspaceOf(ctx));
    return {
      status: 200,
      body: { object: "list", data: docs.map(toCustomFieldDefinition), has_more: false },
    };
  };
}

function createCustomFieldDefinition({ store }: Kit): Handler<"createCustomFieldDefinition"> {
  return async ({ ctx, body }) => {
    assertOptions(body.type, body.options, true);
    const doc = await store.customFieldDefinitions.create(workspaceOf(ctx), body);
    return { status: 201, body: toCustomFieldDefinition(doc) };
  };
}

function getCustomFieldDefinition({ store }: Kit): Handler<"getCustomFieldDefinition"> {
  return async ({ ctx, id }) => ({
    status: 200,
    body: toCustomFieldDefinition(await store.customFieldDefinitions.get(workspaceOf(ctx), id)),
  });
}

function updateCustomFieldDefinition({ store }: Kit): Handler<"updateCustomFieldDefinition"> {
  return async ({ ctx, id, body }) => {
    const workspaceId = workspaceOf(ctx);
    const { type, ...changes } = body;
    const current = await store.customFieldDefinitions.get(workspaceId, id);
    // docs/decisions.md, "Typed custom fields": stored values were checked against the type.
    if (type !== undefined && type !== current.type) {
      throw new AppError(
        400,
        "parameter_invalid",
        `\`type\` cannot change once set (it is \`${current.type}\`): values stored as one type would not read as another. Define a new key instead.`,
        { param: "type" },
      );
    }
    assertOptions(current.type, changes.options, false);
    const doc = await store.customFieldDefinitions.update(workspaceId, id, changes);
    return { status: 200, body: toCustomFieldDefinition(doc) };
  };
}

function deleteCustomFieldDefinition({ store }: Kit): Handler<"deleteCustomFieldDefinition"> {
  return async ({ ctx, id }) => {
    await store.customFieldDefinitions.delete(workspaceOf(ctx), id);
    return { status: 200, body: { key: id, object: "custom_field_definition", deleted: true } };
  };
}
