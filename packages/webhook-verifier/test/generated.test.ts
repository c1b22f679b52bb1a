import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { OUTPUT, render } from "../scripts/generate-types.js";
import type { DesklineEvent, EventData } from "../src/index.js";

describe("types generated from spec/openapi.yaml", () => {
  it("are up to date (run `pnpm -F @deskline/webhook-verifier generate` after changing the spec)", async () => {
    expect(readFileSync(OUTPUT, "utf8")).toBe(await render());
  });

  it("narrow data and previous_attributes by event type", () => {
    // Checked by the typecheck step (tsc), where a wrong type fails the build.
    const handle = (event: DesklineEvent) => {
      if (event.type === "contact.updated") {
        expectTypeOf(event.data.email).toEqualTypeOf<string | null>();
        expectTypeOf(event.previous_attributes.lifecycle_stage).toEqualTypeOf<string | null | undefined>();
      }
      if (event.type === "ticket.created") {
        expectTypeOf(event.data.object).toEqualTypeOf<"ticket">();
        expectTypeOf(event.data.status).toEqualTypeOf<
          "New" | "On you" | "On customer" | "On hold" | "Solved" | "Closed" | "Cancelled"
        >();
      }
      return event.type;
    };
    expectTypeOf<EventData<"message.received">["direction"]>().toEqualTypeOf<"inbound" | "outbound">();
    expect(typeof handle).toBe("function");
  });
});
