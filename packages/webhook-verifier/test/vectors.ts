// Loads the Python-made vectors (scripts/make-vectors.py) and turns their payload recipes into bytes.
import { readFileSync } from "node:fs";

export type PayloadRecipe =
  | { text: string }
  | { hex: string }
  | { prefix?: string; repeat: string; times: number; suffix?: string };

export interface Vector {
  name: string;
  secret: string | string[];
  payload: PayloadRecipe;
  header: string | null;
  expected: { ok: true; timestamp: number } | { error: string };
  /** Present when the signature verifies: what constructEvent gives. */
  event?: { type: string } | { error: string };
  toleranceSeconds?: number;
  /** The payload is not UTF-8, so it has no string form. */
  bytesOnly?: boolean;
}

export interface SignCase {
  payload: PayloadRecipe;
  secret: string | string[];
  timestamp: number;
  header: string;
}

const file = JSON.parse(readFileSync(new URL("./vectors.json", import.meta.url), "utf8")) as {
  now: number;
  toleranceSeconds: number;
  vectors: Vector[];
  sign: SignCase[];
};

export const NOW: number = file.now;
export const vectors: Vector[] = file.vectors;
export const signCases: SignCase[] = file.sign;

/** A delivery's body: an event of `type` about `data`, as the server writes it (JSON text). */
export function eventText(id: string, type: string, data: object, extra: object = {}): string {
  return JSON.stringify({ id, object: "event", type, created: NOW, data, ...extra });
}

export function payloadText(recipe: PayloadRecipe): string {
  if ("text" in recipe) return recipe.text;
  if ("hex" in recipe) throw new Error("a hex payload has no text form");
  return (recipe.prefix ?? "") + recipe.repeat.repeat(recipe.times) + (recipe.suffix ?? "");
}

export function payloadBytes(recipe: PayloadRecipe): Buffer {
  return "hex" in recipe ? Buffer.from(recipe.hex, "hex") : Buffer.from(payloadText(recipe), "utf8");
}

/** Every form a caller may hand the verifier the body in. */
export function payloadForms(v: { payload: PayloadRecipe }) {
  const bytes = payloadBytes(v.payload);
  const forms: { kind: string; payload: string | Uint8Array }[] = [
    { kind: "Buffer", payload: bytes },
    { kind: "Uint8Array", payload: new Uint8Array(bytes) },
  ];
  if (!("hex" in v.payload)) forms.unshift({ kind: "string", payload: payloadText(v.payload) });
  return forms;
}

export function optionsOf(v: Vector) {
  return { now: NOW, ...(v.toleranceSeconds === undefined ? {} : { toleranceSeconds: v.toleranceSeconds }) };
}

/** The code constructEvent must throw, or undefined when it returns an event. */
export function eventError(v: Vector): string | undefined {
  if ("error" in v.expected) return v.expected.error;
  return v.event && "error" in v.event ? v.event.error : undefined;
}
