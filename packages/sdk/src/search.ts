// Typed filters for `contacts.search()` and `tickets.search()`: the spec types a filter's `field`
// as any string (contacts take `custom_fields.<key>` too), so these narrow it to the fields each
// search takes (the spec's `ContactSearchField` / `TicketSearchField`), and tie `values` to `in`
// and `nin` and `value` to the other operators, as the server checks them.

import type { components } from "@deskline/spec/openapi";

type Schemas = components["schemas"];
type Value = Schemas["SearchValue"];

/** One condition: `values` (a list) with `in`/`nin`, `value` with every other operator. */
export type SearchFilter<Field extends string> =
  | { field: Field; operator: "in" | "nin"; values: Value[]; value?: never }
  | {
      field: Field;
      operator: Exclude<Schemas["SearchOperator"], "in" | "nin">;
      value?: Value;
      values?: never;
    };

/** The body of a search, its groups' filters on `Field`: any group may match, all its filters must. */
export type SearchBody<Body, Field extends string> = Omit<Body, "filter_groups"> & {
  filter_groups?: { filters: SearchFilter<Field>[] }[];
};

/** A contact field a search filters on: a named one, or a key of `custom_fields` / `external_ids`. */
export type ContactSearchField =
  | Schemas["ContactSearchField"]
  | `custom_fields.${string}`
  | `external_ids.${string}`;

/** A ticket field a search filters on. */
export type TicketSearchField = Schemas["TicketSearchField"];

export type ContactSearch = SearchBody<Schemas["ContactSearch"], ContactSearchField>;
export type TicketSearch = SearchBody<Schemas["TicketSearch"], TicketSearchField>;
