import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, settings } from "../src/config.js";
import { flag, integer, oneOf, settingGroup } from "../src/platform/settings.js";

/**
 * The declaring kit (platform/settings.ts) over every declared setting: each typed one refuses a
 * wrong value with a ConfigError that names it, and the OpenTelemetry ones are checked only when
 * tracing is on (as before the declarations: a stray OTEL_* without an endpoint stops nothing).
 */

const typed = (prefix: string) =>
  settings.variables
    .filter((variable) => variable.accepts.startsWith(prefix))
    .map((variable) => variable.env);

describe("every declared setting", () => {
  it.each([
    ...typed("integer").map((env) => [env, "1.5"]),
    ...typed("`true` or `false`").map((env) => [env, "maybe"]),
  ])("%s=%j stops the start with an error that names it", (env, value) => {
    const endpoint = env.startsWith("OTEL_") ? { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" } : {};
    expect(() => loadConfig({ ...endpoint, [env]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...endpoint, [env]: value })).toThrow(new RegExp(`^${env} must be`));
  });

  it("reads the defaults from an empty environment", () => {
    expect(typed("integer").length).toBeGreaterThan(20);
    expect(() => loadConfig({})).not.toThrow();
  });

  it("checks OTEL_* only with an endpoint", () => {
    expect(
      loadConfig({ OTEL_TRACES_SAMPLER: "sometimes", OTEL_TRACES_SAMPLER_ARG: "2" }).telemetry,
    ).toBeUndefined();
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_SAMPLER: "x" }),
    ).toThrow("OTEL_TRACES_SAMPLER must be one of");
  });
});

describe("a declaration", () => {
  const group = settingGroup({
    size: integer("SIZE", {
      default: 5,
      min: 1,
      max: { value: 9, why: "below 10 (the reason)" },
      doc: "a size",
    }),
    hours: integer("HOURS", { default: 2, min: 1, times: 3_600_000, doc: "hours" }),
    on: flag("ON", { default: true, doc: "on" }),
    mode: oneOf("MODE", ["a", "b"], { doc: "a mode" }),
  });

  it.each([
    [{}, { size: 5, hours: 7_200_000, on: true, mode: "a" }],
    [
      { SIZE: " 9 ", HOURS: "1", ON: " FALSE ", MODE: " b " },
      { size: 9, hours: 3_600_000, on: false, mode: "b" },
    ],
    [
      { SIZE: "", ON: "", MODE: "  " },
      { size: 5, hours: 7_200_000, on: true, mode: "a" },
    ],
  ])("reads %j", (env, values) => {
    expect(group.read(env)).toEqual(values);
  });

  it.each([
    [{ SIZE: "0" }, 'SIZE must be an integer >= 1, got "0"'],
    [{ SIZE: "10" }, "SIZE must be below 10 (the reason), got 10"],
    [{ ON: "yes" }, 'ON must be true or false, got "yes"'],
    [{ MODE: "c" }, 'MODE must be one of a, b, got "c"'],
  ])("refuses %j: %s", (env, message) => {
    expect(() => group.read(env)).toThrow(new ConfigError(message));
  });

  it("documents its default, what it accepts and what it means", () => {
    expect(group.variables).toEqual([
      { env: "SIZE", default: "`5`", accepts: "integer, 1 to 9", doc: "a size" },
      { env: "HOURS", default: "`2`", accepts: "integer ≥ 1", doc: "hours" },
      { env: "ON", default: "`true`", accepts: "`true` or `false`", doc: "on" },
      { env: "MODE", default: "`a`", accepts: "`a`, `b`", doc: "a mode" },
    ]);
  });
});
