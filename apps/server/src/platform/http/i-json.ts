/**
 * What JSON.parse lets through but a stored record must not hold: bodies are read as I-JSON
 * (RFC 7493). A duplicated name is silently resolved by JSON.parse (the last one wins), a lone
 * surrogate would be stored as U+FFFD (BSON strings are UTF-8), an integer beyond ±2^53 has already
 * lost digits, and a NUL byte is refused by MongoDB in keys and cuts strings short in many clients.
 * Pure and iterative (no recursion), so a body nested 100,000 deep cannot overflow the stack.
 */

/** `path` + `key` in the API's `param` notation: `custom_fields.plan`, `tags[1]`. */
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

interface Frame {
  path: string;
  /** The names seen so far in an object; undefined for an array. */
  names?: Set<string>;
  expectName: boolean;
  name: string;
  index: number;
}

const childPath = (frame: Frame | undefined): string => {
  if (!frame) return "";
  return frame.names ? join(frame.path, frame.name) : `${frame.path}[${frame.index}]`;
};

/**
 * The `param` of the first name that appears twice in one object of `text`, compared after
 * unescaping (`"a"` and `"\u0061"` are the same name). `text` must already be valid JSON.
 */
export function findDuplicateName(text: string): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (top?.names && top.expectName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.names.has(name)) return join(top.path, name);
        top.names.add(name);
        top.name = name;
        top.expectName = false;
      }
      i = end;
    } else if (c === "{" || c === "[") {
      const path = childPath(stack.at(-1));
      stack.push({ path, names: c === "{" ? new Set() : undefined, expectName: true, name: "", index: 0 });
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      const top = stack.at(-1);
      if (top?.names) top.expectName = true;
      else if (top) top.index += 1;
    }
  }
  return undefined;
}

export interface Violation {
  param: string;
  message: string;
}

const NUL = "\u0000";
/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(value: string): string | undefined {
  if (value.includes(NUL)) return "contains a NUL character";
  if (LONE_SURROGATE.test(value)) return "contains a lone UTF-16 surrogate (not valid Unicode)";
  return undefined;
}

/**
 * The first string (value or name) with a NUL or a lone surrogate, or number that JSON cannot
 * carry exactly (an integer beyond ±(2^53 − 1), or one that overflowed to Infinity), in `value`.
 */
export function findUnsafeValue(value: unknown): Violation | undefined {
  const pending: [string, unknown][] = [["", value]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [path, item] = next;
    if (typeof item === "string") {
      const problem = stringProblem(item);
      if (problem) return { param: path, message: `\`${path}\` ${problem}.` };
    } else if (typeof item === "number") {
      if (!Number.isFinite(item) || (Number.isInteger(item) && !Number.isSafeInteger(item))) {
        return {
          param: path,
          message: `\`${path}\` is beyond ±(2^53 − 1), which JSON numbers cannot carry exactly.`,
        };
      }
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([`${path}[${i}]`, item[i]]);
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, child] = entries[i] as [string, unknown];
        const problem = stringProblem(name);
        if (problem)
          return { param: join(path, name), message: `The name \`${join(path, name)}\` ${problem}.` };
        pending.push([join(path, name), child]);
      }
    }
  }
  return undefined;
}
