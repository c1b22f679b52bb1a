import { notFound } from "../platform/errors.js";
import type { RouteKit } from "../platform/http/route-kit.js";
import type { ApiKeys } from "./api-keys.js";
import { toApiKey } from "./api-keys.js";
import { toWorkspace, type Workspaces } from "./store.js";

/** docs/design.md, Conversations and admin: the operator's API (bearer ADMIN_TOKEN): workspaces and their API keys. */
export function adminRoutes({ op, store }: RouteKit<{ workspaces: Workspaces; apiKeys: ApiKeys }>): void {
  op("createWorkspace", async ({ body }) => ({
    status: 201,
    body: toWorkspace(await store.workspaces.create(body.name)),
  }));

  op("createApiKey", async ({ id, body }) => {
    await assertWorkspace(store.workspaces, id);
    const { doc, key } = await store.apiKeys.create(id, body.name, body.scopes);
    return { status: 201, body: { ...toApiKey(doc), key } };
  });

  op("listApiKeys", async ({ id }) => {
    await assertWorkspace(store.workspaces, id);
    const docs = await store.apiKeys.list(id);
    return { status: 200, body: { object: "list", data: docs.map(toApiKey), has_more: false } };
  });

  op("introspectApiKey", async ({ body }) => {
    const doc = await store.apiKeys.findByPlaintext(body.key);
    // The plaintext is never echoed back, not even in the error.
    if (!doc) throw notFound("API key", undefined, "key");
    return { status: 200, body: toApiKey(doc) };
  });

  op("revokeApiKey", async ({ id }) => {
    const doc = await store.apiKeys.revoke(id);
    if (!doc) throw notFound("API key", id);
    return { status: 200, body: toApiKey(doc) };
  });
}

export async function assertWorkspace(workspaces: Pick<Workspaces, "exists">, id: string): Promise<void> {
  if (!(await workspaces.exists(id))) throw notFound("workspace", id);
}
