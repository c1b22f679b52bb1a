import { defineConfig } from "tsup";
import { publishedBuild } from "../tsup.base.js";

export default defineConfig({ ...publishedBuild, entry: { index: "src/index.ts", web: "src/web.ts" } });
