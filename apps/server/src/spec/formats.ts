import type { Ajv2020 } from "ajv/dist/2020.js";

/** The string formats the spec names beyond the standard ones (DESIGN.md §3). */
export function addSpecFormats(ajv: Ajv2020): void {
  ajv.addFormat("iana-timezone", {
    type: "string",
    validate: (value: string) => {
      try {
        new Intl.DateTimeFormat("en", { timeZone: value });
        return value.includes("/") || value === "UTC";
      } catch {
        return false;
      }
    },
  });
  ajv.addFormat("bcp47", {
    type: "string",
    validate: (value: string) => {
      try {
        return Intl.getCanonicalLocales(value).length === 1;
      } catch {
        return false;
      }
    },
  });
}
