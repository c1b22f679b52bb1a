import { AppError, notFound } from "../platform/errors.js";
import type { Handler } from "../platform/http/operation.js";
import { mountHandlers, type RouteKit } from "../platform/http/route-kit.js";
import { isPhoneCountry } from "../platform/phone-numbers.js";
import type { ApiKeys } from "./api-keys.js";
import { toApiKey } from "./api-keys.js";
import { toWorkspace, type Workspaces } from "./workspaces.js";

type Kit = RouteKit<{ workspaces: Workspaces; apiKeys: ApiKeys }>;

/** docs/design.md, Conversations and admin: the operator's API (bearer ADMIN_TOKEN): workspaces and their API keys. */
export function adminRoutes(kit: Kit): void {
  mountHandlers(kit, {
    createWorkspace,
    updateWorkspace,
    createApiKey,
    listApiKeys,
    introspectApiKey,
    revokeApiKey,
  });
}

function createWorkspace({ store }: Kit): Handler<"createWorkspace"> {
  return async ({ body }) => {
    const { name, ...settings } = body;
    assertPhoneCountry(settings.default_phone_country);
    return { status: 201, body: toWorkspace(await store.workspaces.create(name, settings)) };
  };
}

function updateWorkspace({ store }: Kit): Handler<"updateWorkspace"> {
  return async ({ id, body }) => {
    assertPhoneCountry(body.default_phone_country);
    const doc = await store.workspaces.update(id, body);
    if (!doc) throw notFound("workspace", id);
    return { status: 200, body: toWorkspace(doc) };
  };
}

/** A country libphonenumber-js knows: two capitals (the schema's check) may still name none. */
function assertPhoneCountry(country: string | null | undefined): void {
  if (country && !isPhoneCountry(country)) {
    throw new AppError(
      400,
      "parameter_invalid",
      `\`default_phone_country\` '${country}' is not a country with phone numbers.`,
      {
        param: "default_phone_country",
      },
    );
  }
}

function createApiKey({ store }: Kit): Handler<"createApiKey"> {
  return async ({ id, body }) => {
    await assertWorkspace(store.workspaces, id);
    const { doc, key } = await store.apiKeys.create(id, body.name, body.scopes);
    return { status: 201, body: { ...toApiKey(doc), key } };
  };
}

function listApiKeys({ store }: Kit): Handler<"listApiKeys"> {
  return async ({ id }) => {
    await assertWorkspace(store.workspaces, id);
    const docs = await store.apiKeys.list(id);
    return { status: 200, body: { object: "list", data: docs.map(toApiKey), has_more: false } };
  };
}

function introspectApiKey({ store }: Kit): Handler<"introspectApiKey"> {
  return async ({ body }) => {
    const doc = await store.apiKeys.findByPlaintext(body.key);
    // The plaintext is never echoed back, not even in the error.
    if (!doc) throw notFound("API key", undefined, "key");
    return { status: 200, body: toApiKey(doc) };
  };
}

function revokeApiKey({ store }: Kit): Handler<"revokeApiKey"> {
  return async ({ id }) => {
    const doc = await store.apiKeys.revoke(id);
    if (!doc) throw notFound("API key", id);
    return { status: 200, body: toApiKey(doc) };
  };
}

export async function assertWorkspace(workspaces: Pick<Workspaces, "exists">, id: string): Promise<void> {
  if (!(await workspaces.exists(id))) throw notFound("workspace", id);
}
