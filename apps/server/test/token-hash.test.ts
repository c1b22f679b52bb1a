// The one token hash: the stored form is hex SHA-256 (existing databases keep working), and the
// comparison answers equality whatever the lengths.
import { describe, expect, it } from "vitest";
import { hashToken, sameToken } from "../src/platform/token-hash.js";

describe("hashToken", () => {
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["dk_test_123", "ef896e9be2f3aba3dc88f4358b7ef278e18fbb2445e9ef6a52c55150053b155a"],
  ])("hashes %j to its hex SHA-256 (vectors from `sha256sum`)", (token, hex) => {
    expect(hashToken(token)).toBe(hex);
  });
});

describe("sameToken", () => {
  it.each([
    ["secret", "secret", true],
    ["secret", "secreT", false],
    ["secret", "secret-longer", false],
    ["", "", true],
    ["", "x", false],
  ])("%j vs %j → %s", (a, b, same) => {
    expect(sameToken(a, b)).toBe(same);
  });
});
