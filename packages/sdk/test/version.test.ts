// The version the SDK announces (User-Agent, VERSION) is the package's.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/index.js";

describe("version", () => {
  it("VERSION is package.json's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(VERSION).toBe(manifest.version);
  });
});
