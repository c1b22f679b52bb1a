// Where the CLI's settings come from: flags, then environment variables, then a named profile in
// the user's config file (written with mode 0600: it holds API keys), then the defaults.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "./errors.js";
import { terminal } from "./terminal.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:3000";
export const DEFAULT_PROFILE = "default";

/** The settings a profile can hold, by the name `deskline config set` takes. */
export const PROFILE_SETTINGS = { "api-key": "api_key", "base-url": "base_url" } as const;
export type SettingName = keyof typeof PROFILE_SETTINGS;

export interface Profile {
  api_key?: string;
  base_url?: string;
}

export interface ConfigFile {
  current_profile?: string;
  profiles: Record<string, Profile>;
}

/** `$XDG_CONFIG_HOME/deskline` (else `~/.config/deskline`), `%APPDATA%\deskline` on Windows. */
export function configPath(env: NodeJS.ProcessEnv = terminal().env): string {
  const base =
    env.XDG_CONFIG_HOME ||
    (process.platform === "win32" && env.APPDATA ? env.APPDATA : join(env.HOME || homedir(), ".config"));
  return join(base, "deskline", "config.json");
}

export function readConfig(path = configPath()): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch {
    throw new UsageError(`${path} is not valid JSON; fix or delete it.`);
  }
}

/** Writes the file readable by its owner only, replacing it whole (no half-written file). */
export function writeConfig(config: ConfigFile, path = configPath()): void {
  writePrivateFile(path, `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * Replaces `path` whole with `text`, readable by its owner only: written beside it, then renamed
 * over it, so a crash or a kill leaves the old file or the new one, never half of one.
 */
export function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

export function settingName(name: string): SettingName {
  const normalized = name.replace(/_/g, "-");
  if (normalized in PROFILE_SETTINGS) return normalized as SettingName;
  throw new UsageError(
    `unknown setting '${name}'; settings are: ${Object.keys(PROFILE_SETTINGS).join(", ")}`,
  );
}

/** Enough of a key to recognise it, never enough to use it: `dsk_AbCd…wxyz` (or `dk_…` for older keys). */
export function maskKey(key: string): string {
  const prefix = /^(dsk_|dk_)/.exec(key)?.[1] ?? "";
  const rest = key.slice(prefix.length);
  if (rest.length <= 8) return `${prefix}${"*".repeat(rest.length)}`;
  return `${prefix}${rest.slice(0, 4)}…${rest.slice(-4)}`;
}

export interface GlobalFlags {
  apiKey?: string;
  baseUrl?: string;
  profile?: string;
}

export interface Settings {
  apiKey: string | undefined;
  baseUrl: string;
  profile: string;
  /** Where each value came from, for `deskline config show`. */
  sources: { apiKey: string; baseUrl: string };
}

/** Flags first, then DESKLINE_* variables, then the profile, then the defaults. */
export function resolveSettings(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv = terminal().env,
  config: ConfigFile = readConfig(configPath(env)),
): Settings {
  const profileName = flags.profile || env.DESKLINE_PROFILE || config.current_profile || DEFAULT_PROFILE;
  const explicitProfile = Boolean(flags.profile || env.DESKLINE_PROFILE);
  const profile = config.profiles[profileName];
  if (!profile && explicitProfile) {
    const known = Object.keys(config.profiles);
    throw new UsageError(
      `no profile '${profileName}' in ${configPath(env)}` +
        (known.length ? ` (profiles: ${known.join(", ")})` : "") +
        `; create it with: deskline config set api-key <key> --profile ${profileName}`,
    );
  }
  const pick = (flag: string | undefined, variable: string, stored: string | undefined) =>
    flag
      ? { value: flag, source: "flag" }
      : env[variable]
        ? { value: env[variable], source: `$${variable}` }
        : stored
          ? { value: stored, source: `profile ${profileName}` }
          : { value: undefined, source: "unset" };
  const apiKey = pick(flags.apiKey, "DESKLINE_API_KEY", profile?.api_key);
  const baseUrl = pick(flags.baseUrl, "DESKLINE_BASE_URL", profile?.base_url);
  return {
    apiKey: apiKey.value,
    baseUrl: normalizeBaseUrl(baseUrl.value ?? DEFAULT_BASE_URL),
    profile: profileName,
    sources: { apiKey: apiKey.source, baseUrl: baseUrl.value ? baseUrl.source : "default" },
  };
}

/**
 * The SDK wants the server's address; people paste what `pnpm start` prints, which ends in
 * `/open/v1`. Both work.
 */
export function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`base URL '${value}' is not a URL (e.g. https://deskline.example.com)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`base URL '${value}' must be http: or https:`);
  }
  return url.href.replace(/\/+$/, "").replace(/\/open\/v1$/, "");
}

export const MISSING_KEY_MESSAGE = [
  "no API key. Set one with any of:",
  "  deskline config set api-key <key>      (saved in your config file, mode 0600)",
  "  export DESKLINE_API_KEY=<key>",
  "  deskline --api-key <key> …",
].join("\n");
