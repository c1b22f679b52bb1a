/**
 * How a setting is declared, once: its environment variable, a zod schema that turns the
 * variable's text into a typed value (with its default, its bounds and an error naming the
 * variable), and its row of docs/operations.md. Each capability declares its own settings
 * (`webhooks/settings.ts`, `events/settings.ts`…) with these; config.ts at the source root
 * composes them into the one `Config`, and scripts/generate-config-doc.ts renders the table.
 */

import { z } from "zod";

/** A value the operator set wrong; main.ts prints it as `configuration error: …` and exits 1. */
export class ConfigError extends Error {}

/** One environment variable: how its text becomes a value, and what the docs say of it. */
export interface Setting<T> {
  env: string;
  /** Parses the variable as the process has it (undefined when unset); its errors name the variable. */
  schema: z.ZodType<T, string | undefined>;
  /** The table's `default` cell (markdown). */
  default: string;
  /** The table's `accepts` cell (markdown): the type and bounds the schema enforces. */
  accepts: string;
  /** The table's `meaning` cell (markdown). */
  doc: string;
}

/** A variable the docs list beside the settings, which something other than the server reads. */
export type DocumentedVariable = Omit<Setting<unknown>, "schema">;

type Settings = Record<string, Setting<unknown>>;
export type ValuesOf<S extends Settings> = { [K in keyof S]: z.output<S[K]["schema"]> };

/** A capability's settings, and what it makes of their values (most: the values themselves). */
export interface SettingGroup<R> {
  /** What the docs list, in this order. */
  variables: DocumentedVariable[];
  read(env: NodeJS.ProcessEnv): R;
}

/** Unset, or set to nothing: either way the default applies. */
const blank = (raw: string | undefined): raw is undefined | "" => raw === undefined || raw === "";
const code = (value: unknown) => `\`${String(value)}\``;
/** The table's `default` cell: as the declaration words it, else the value, else "unset". */
const defaultCell = (described: Described, value: unknown) =>
  described.defaultDoc ?? (value === undefined ? "unset" : code(value));

/** Parses one variable of `env`, or throws ConfigError with the schema's first message. */
function parse<T>(setting: Setting<T>, env: NodeJS.ProcessEnv): T {
  const result = setting.schema.safeParse(env[setting.env]);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues[0]?.message ?? `${setting.env} is not valid`);
}

/**
 * A group of settings. `build` gets the values as getters, each parsed (once) when first read, so
 * a setting that only matters beside another (the OpenTelemetry ones without an endpoint) is
 * checked only then; without `build`, the group's value is every setting's, in order.
 */
export function settingGroup<S extends Settings, R = ValuesOf<S>>(
  settings: S,
  options: {
    build?: (values: ValuesOf<S>) => R;
    alsoDocumented?: DocumentedVariable[];
  } = {},
): SettingGroup<R> {
  const build = options.build ?? ((values: ValuesOf<S>) => ({ ...values }) as R);
  return {
    variables: [
      ...Object.values(settings).map(({ env, default: fallback, accepts, doc }) => ({
        env,
        default: fallback,
        accepts,
        doc,
      })),
      ...(options.alsoDocumented ?? []),
    ],
    read(env) {
      const values = {} as ValuesOf<S>;
      for (const [key, setting] of Object.entries(settings)) {
        let read: { value: unknown } | undefined;
        const get = () => {
          read ??= { value: parse(setting, env) };
          return read.value;
        };
        Object.defineProperty(values, key, { enumerable: true, get });
      }
      return build(values);
    },
  };
}

/**
 * The schema of a variable: unset or empty (after trimming, if `trim`) is `fallback`; any other
 * text must pass `given`, whose messages name the variable.
 */
function withDefault<T, F>(
  fallback: F,
  given: z.ZodType<T, string>,
  trim = true,
): z.ZodType<T | F, string | undefined> {
  return z
    .string()
    .optional()
    .transform((raw, context) => {
      const value = trim ? raw?.trim() : raw;
      if (blank(value)) return fallback;
      const result = given.safeParse(value);
      if (result.success) return result.data;
      for (const { message } of result.error.issues) context.addIssue({ code: "custom", message });
      return z.NEVER;
    });
}

interface Described {
  doc: string;
  /** The default as the docs say it, when its value alone would not (`2 × the rate`). */
  defaultDoc?: string;
}

interface IntegerOptions<D extends number | undefined> extends Described {
  default: D;
  /** The least accepted value (0 unless given). */
  min?: number;
  /** The most accepted value, and why there is one (the error says so). */
  max?: { value: number; why: string };
  /** The value is in these units: hours → ms is 3_600_000 (the variable is read before it). */
  times?: number;
}

/** An integer of at least `min` (and at most `max`); unset or empty takes the default. */
export function integer<D extends number | undefined>(
  env: string,
  options: IntegerOptions<D>,
): Setting<number | D> {
  const { min = 0, max, times = 1 } = options;
  const given = z
    .string()
    .refine((raw) => Number.isInteger(Number(raw)) && Number(raw) >= min, {
      error: (issue) => `${env} must be an integer >= ${min}, got ${JSON.stringify(issue.input)}`,
      abort: true,
    })
    .transform(Number)
    .refine((value) => max === undefined || value <= max.value, {
      error: (issue) => `${env} must be ${max?.why}, got ${issue.input}`,
    })
    .transform((value) => value * times);
  // The default is in the variable's units too (IDEMPOTENCY_TTL_HOURS: 24).
  const fallback = (options.default === undefined ? undefined : options.default * times) as D;
  return {
    env,
    // Not trimmed: Number() ignores the spaces around a number, as it always has here.
    schema: withDefault(fallback, given, false),
    default: defaultCell(options, options.default),
    accepts: max ? `integer, ${min} to ${max.value}` : `integer ≥ ${min}`,
    doc: options.doc,
  };
}

/** `true`/`1` or `false`/`0`, any case; unset or empty takes the default. */
export function flag(env: string, options: Described & { default: boolean }): Setting<boolean> {
  const given = z.stringbool({
    truthy: ["true", "1"],
    falsy: ["false", "0"],
    error: (issue) => `${env} must be true or false, got ${JSON.stringify(issue.input)}`,
  });
  return {
    env,
    schema: withDefault(options.default, given),
    default: defaultCell(options, options.default),
    accepts: "`true` or `false`",
    doc: options.doc,
  };
}

/** Text, trimmed; unset or blank is the default (undefined unless given). */
export function text<D extends string | undefined = undefined>(
  env: string,
  options: Described & { default?: D; accepts?: string },
): Setting<string | D> {
  return {
    env,
    schema: withDefault(options.default as D, z.string()),
    default: defaultCell(options, options.default),
    accepts: options.accepts ?? "text",
    doc: options.doc,
  };
}

/** One of `values`: the first by default, or none with `optional` (another setting decides). */
export function oneOf<const T extends readonly [string, ...string[]], O extends boolean = false>(
  env: string,
  values: T,
  options: Described & { optional?: O },
): Setting<O extends true ? T[number] | undefined : T[number]> {
  const given = z.enum(values, {
    error: (issue) => `${env} must be one of ${values.join(", ")}, got ${JSON.stringify(issue.input)}`,
  });
  const fallback = options.optional ? undefined : values[0];
  return {
    env,
    schema: withDefault(fallback, given) as Setting<
      O extends true ? T[number] | undefined : T[number]
    >["schema"],
    default: defaultCell(options, fallback),
    accepts: values.map(code).join(", "),
    doc: options.doc,
  };
}

/**
 * Text that `read` turns into a value, throwing an Error that says what is wrong (the variable's
 * name is put before the message unless it names the variable itself). Unset or blank text is
 * read as `unset` when given; else the value is undefined.
 */
export function custom<T, U extends string | undefined = undefined>(
  env: string,
  options: Described & { read: (text: string) => T; unset?: U; accepts: string },
): Setting<U extends string ? T : T | undefined> {
  const { read, unset } = options;
  const schema = z
    .string()
    .trim()
    .optional()
    .transform((raw, context) => {
      const given = blank(raw) ? unset : raw;
      if (given === undefined) return undefined;
      try {
        return read(given);
      } catch (error) {
        const message = (error as Error).message;
        context.addIssue({ code: "custom", message: message.includes(env) ? message : `${env}: ${message}` });
        return z.NEVER;
      }
    });
  return {
    env,
    schema: schema as z.ZodType<U extends string ? T : T | undefined, string | undefined>,
    default: defaultCell(options, unset),
    accepts: options.accepts,
    doc: options.doc,
  };
}

type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void
  ? I
  : never;

/** Several capabilities' groups as one: every variable listed, every value in one object. */
export function composeSettings<const G extends SettingGroup<object>[]>(
  ...groups: G
): SettingGroup<Intersection<ReturnType<G[number]["read"]>>> {
  return {
    variables: groups.flatMap((group) => group.variables),
    read: (env) => Object.assign({}, ...groups.map((group) => group.read(env))),
  };
}
