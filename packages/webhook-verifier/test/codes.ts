import { expect } from "vitest";
import { WebhookVerificationError } from "../src/index.js";

/** The code of the WebhookVerificationError `fn` throws; undefined when it throws none. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  return undefined;
}

/** {@link codeOf} for a verification that answers a promise. */
export async function codeOfAsync(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  return undefined;
}
