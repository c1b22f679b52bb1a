// Loaded before every test file (setupFiles): what the file's helpers started stops after its
// tests, whether or not the worker already ran another file, and what a test started stops after
// that test (helpers/file-end.ts).
import { afterAll, aroundEach } from "vitest";
import { fileEndInstalled, runFileEnd, runTest } from "../helpers/file-end.js";

fileEndInstalled();
aroundEach(runTest);
afterAll(runFileEnd);
