// The values the spec states that the server needs at run time (schema property names, enums,
// ticket moves), generated into @deskline/spec (spec/values.js; `pnpm generate` at the root),
// under the path the server's modules import them by.
export { schemaEnums, schemaProperties, schemaTransitions } from "@deskline/spec/values";
