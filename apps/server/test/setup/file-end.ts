// Loaded before every test file (setupFiles): what the file's helpers started stops after its
// tests, whether or not the worker already ran another file (helpers/file-end.ts).
import { afterAll } from "vitest";
import { fileEndInstalled, runFileEnd } from "../helpers/file-end.js";

fileEndInstalled();
afterAll(runFileEnd);
