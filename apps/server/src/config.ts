/**
 * The one `Config` the server runs with, read once from the environment: each capability declares
 * its own settings (platform/settings.ts says how), and this composes them. Nothing else reads
 * process.env. The order here is the order of docs/operations.md's table, which
 * scripts/generate-config-doc.ts renders from these declarations.
 */

import { consoleSettings } from "./console/settings.js";
import { customFieldSettings } from "./contacts/settings.js";
import { eventSettings } from "./events/settings.js";
import {
  databaseSettings,
  httpSettings,
  logSettings,
  secretSettings,
  serverSettings,
} from "./platform/config.js";
import { composeSettings } from "./platform/settings.js";
import { telemetrySettings } from "./platform/telemetry/settings.js";
import { pullSettings } from "./records/settings.js";
import { retentionSettings } from "./retention/settings.js";
import { egressSettings, limitSettings, webhookSettings } from "./webhooks/settings.js";
import { apiKeySettings } from "./workspaces/settings.js";

export { DEFAULT_DATA_DIR } from "./platform/config.js";
export { ConfigError } from "./platform/settings.js";

export const settings = composeSettings(
  serverSettings,
  databaseSettings,
  httpSettings,
  apiKeySettings,
  customFieldSettings,
  logSettings,
  pullSettings,
  eventSettings,
  retentionSettings,
  webhookSettings,
  egressSettings,
  limitSettings,
  secretSettings,
  consoleSettings,
  telemetrySettings,
);

export type Config = ReturnType<typeof settings.read>;

/** Reads every setting from `env`; a wrong one throws ConfigError naming it and what it takes. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return settings.read(env);
}
