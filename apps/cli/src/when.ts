// Points in time on the command line, parsed in one place for every flag that takes one: Unix
// seconds, an RFC 3339 time, or (where a flag allows it) a duration back from now, `2d`, `6h`,
// `30m`, `1d12h`, as an operator says "since two days ago" after an outage.

import parseDuration from "parse-duration";

/** What a time flag accepts, for help texts and error messages. */
export const WHEN_FORMATS = "a duration back from now (2d, 6h, 30m), Unix seconds or an RFC 3339 time";

/** Unix seconds of a number of Unix seconds or an RFC 3339 time; undefined for anything else. */
export function secondsOf(value: string): number | undefined {
  if (/^\d{1,12}$/.test(value)) return Number(value);
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  }
  return undefined;
}

/** Seconds in a duration of whole units (`90s`, `30m`, `6h`, `2d`, `1w`, `1d12h`); undefined otherwise. */
export function durationSeconds(value: string): number | undefined {
  // What a flag takes is this grammar; the sum of its parts is parse-duration's (as the server's settings).
  if (!/^(\d+[smhdw])+$/.test(value)) return undefined;
  return parseDuration(value, "s") ?? undefined;
}

/** Unix seconds of a duration back from `now` (`2d`: two days ago); undefined for anything else. */
export function ago(value: string, now = Date.now() / 1000): number | undefined {
  const back = durationSeconds(value);
  return back === undefined ? undefined : Math.floor(now - back);
}

/** Unix seconds of a duration back from `now`, Unix seconds or an RFC 3339 time; undefined otherwise. */
export function pointInTime(value: string, now = Date.now() / 1000): number | undefined {
  return ago(value, now) ?? secondsOf(value);
}

/** Unix seconds as the API's RFC 3339 (whole seconds, `Z`). */
export const rfc3339 = (seconds: number): string =>
  new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
