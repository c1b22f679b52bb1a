// `deskline config …`: API keys and base URLs kept in named profiles in the user's config file
// (mode 0600). A key is never printed back whole.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import {
  type ConfigFile,
  configPath,
  DEFAULT_PROFILE,
  maskKey,
  normalizeBaseUrl,
  PROFILE_SETTINGS,
  readConfig,
  resolveSettings,
  settingName,
  writeConfig,
} from "../config.js";
import { globalsOf } from "../context.js";
import { UsageError } from "../errors.js";
import { formatTable, printObject, writeLine } from "../output.js";
import { terminal } from "../terminal.js";
import { examples } from "./kit.js";

const SETTINGS = Object.keys(PROFILE_SETTINGS).join(", ");

/** The profile a config command acts on: --profile, $DESKLINE_PROFILE, the current one, `default`. */
function targetProfile(command: Command, config: ConfigFile): string {
  return (
    globalsOf(command).profile || terminal().env.DESKLINE_PROFILE || config.current_profile || DEFAULT_PROFILE
  );
}

const shown = (setting: string, value: string | undefined) =>
  value === undefined ? undefined : setting === "api-key" ? maskKey(value) : value;

export function register(config: Command): void {
  examples(
    config,
    "deskline config set api-key dsk_…",
    "deskline config set base-url https://deskline.example.com --profile prod",
  );
  settingCommands(config);
  profileCommands(config);
}

/** `config set|get|unset <setting>`: one setting of the target profile. */
function settingCommands(config: Command): void {
  examples(
    config
      .command("set")
      .description(`save a setting (${SETTINGS}) in a profile (--profile, default: the current one)`)
      .argument("<setting>", SETTINGS)
      .argument("<value>", "the value; - reads it from stdin (keeps keys out of shell history)")
      .action(runSet),
    "deskline config set api-key dsk_FuKU…",
    'printf %s "$KEY" | deskline config set api-key - --profile prod',
  );
  examples(
    config
      .command("get")
      .description("print a setting of a profile (an API key masked)")
      .argument("<setting>", SETTINGS)
      .action(runGet),
    "deskline config get base-url --profile prod",
  );
  examples(
    config
      .command("unset")
      .description("remove a setting from a profile")
      .argument("<setting>", SETTINGS)
      .action(runUnset),
    "deskline config unset api-key --profile old",
  );
}

/** `config use|show|path`: which profile is current, what is in effect, where the file is. */
function profileCommands(config: Command): void {
  examples(
    config
      .command("use")
      .description("make a profile the current one")
      .argument("<profile>", "profile name")
      .action(runUse),
    "deskline config use prod",
  );
  examples(
    config
      .command("show")
      .alias("list")
      .description("show the profiles and the settings in effect, with where each comes from")
      .action(runShow),
    "deskline config show --profile prod",
  );
  examples(
    config
      .command("path")
      .description("print where the config file is")
      .action(() => writeLine(configPath())),
    "deskline config path",
  );
}

/** What `set`, `get` and `unset` act on: the setting named, the config file, the target profile. */
function target(name: string, command: Command) {
  const setting = settingName(name);
  const file = readConfig();
  return { setting, file, profile: targetProfile(command, file) };
}

function runSet(name: string, value: string, _options: unknown, command: Command): void {
  const setting = settingName(name);
  let text = value === "-" ? readFileSync(0, "utf8").trim() : value.trim();
  if (!text) throw new UsageError(`empty value for ${setting}`);
  if (setting === "base-url") text = normalizeBaseUrl(text);
  const { file, profile } = target(name, command);
  file.profiles[profile] = { ...file.profiles[profile], [PROFILE_SETTINGS[setting]]: text };
  file.current_profile ??= profile;
  writeConfig(file);
  writeLine(`${setting} of profile '${profile}' set to ${shown(setting, text)} (${configPath()})`);
}

function runGet(name: string, _options: unknown, command: Command): void {
  const { setting, file, profile } = target(name, command);
  const value = file.profiles[profile]?.[PROFILE_SETTINGS[setting]];
  if (value === undefined) throw new UsageError(`${setting} is not set in profile '${profile}'`);
  writeLine(shown(setting, value) ?? "");
}

function runUnset(name: string, _options: unknown, command: Command): void {
  const { setting, file, profile } = target(name, command);
  const stored = file.profiles[profile];
  if (stored) delete stored[PROFILE_SETTINGS[setting]];
  writeConfig(file);
  writeLine(`${setting} removed from profile '${profile}'`);
}

function runUse(profile: string): void {
  const file = readConfig();
  if (!file.profiles[profile]) {
    throw new UsageError(
      `no profile '${profile}'; create it with: deskline config set api-key <key> --profile ${profile}`,
    );
  }
  file.current_profile = profile;
  writeConfig(file);
  writeLine(`current profile: ${profile}`);
}

/** `config show`: the settings in effect with their sources, then the profiles (masked keys). */
function runShow(_options: unknown, command: Command): void {
  const file = readConfig();
  const globals = globalsOf(command);
  const settings = resolveSettings(globals);
  const effective = {
    profile: settings.profile,
    api_key: settings.apiKey ? maskKey(settings.apiKey) : null,
    api_key_from: settings.sources.apiKey,
    base_url: settings.baseUrl,
    base_url_from: settings.sources.baseUrl,
    config_file: configPath(),
  };
  const profiles = Object.entries(file.profiles).map(([name, profile]) => ({
    name,
    current: name === (file.current_profile ?? DEFAULT_PROFILE),
    api_key: profile.api_key ? maskKey(profile.api_key) : null,
    base_url: profile.base_url ?? null,
  }));
  if (globals.json) {
    writeLine(JSON.stringify({ ...effective, profiles }));
    return;
  }
  printObject(effective, false);
  if (profiles.length === 0) return;
  writeLine("");
  writeLine(
    formatTable(profiles, [
      { header: "PROFILE", value: (p) => `${p.name}${p.current ? " *" : ""}` },
      { header: "API KEY", value: (p) => p.api_key },
      { header: "BASE URL", value: (p) => p.base_url },
    ]),
  );
}
