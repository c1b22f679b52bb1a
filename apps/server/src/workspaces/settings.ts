/** How long a process trusts an API key it looked up (workspaces/api-keys.ts). */

import { integer, settingGroup } from "../platform/settings.js";

export const apiKeySettings = settingGroup({
  apiKeyCacheMs: integer("API_KEY_CACHE_MS", {
    default: 1_000,
    doc: "how long an API process trusts an API key it looked up; a revocation takes effect at once in the process that served it and within this long in the others; `0` looks the key up on every request",
  }),
});
