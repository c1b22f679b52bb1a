// @hey-api/openapi-ts's configuration for test/e2e/generated-clients.test.ts: the fetch client, zod
// schemas, and an SDK that validates every request and success body with them. The test gives the
// input (the served spec's URL) and the output folder.
import { defineConfig } from "@hey-api/openapi-ts";

export default defineConfig({
  input: process.env.DESKLINE_SPEC_URL as string,
  output: process.env.DESKLINE_CLIENT_OUTPUT as string,
  plugins: ["@hey-api/client-fetch", "zod", { name: "@hey-api/sdk", validator: true }],
});
