/** How long a process trusts the custom field definitions it read (contacts/custom-field-definitions.ts). */

import { integer, settingGroup } from "../platform/settings.js";

export const customFieldSettings = settingGroup({
  customFieldCacheMs: integer("CUSTOM_FIELD_CACHE_MS", {
    default: 1_000,
    doc: "how long an API process trusts a workspace's custom field definitions it read; a change takes effect at once in the process that made it and within this long in the others; `0` reads them on every contact write",
  }),
});
