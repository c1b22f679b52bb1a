import type {
  components as AdminComponents,
  operations as AdminOperations,
} from "@deskline/spec-types/admin";
import type {
  components as PublicComponents,
  operations as PublicOperations,
} from "@deskline/spec-types/openapi";

/**
 * The request and response types of every spec operation, looked up by `operationId`, so a
 * handler is checked by tsc against the contract it serves (types from @deskline/spec-types).
 */
export type Operations = PublicOperations & AdminOperations;
export type OperationId = keyof Operations & string;

/** The body of a request or response: its one content type's schema. */
type ContentOf<T> = T extends { content: infer C } ? C[keyof C] : undefined;

type Parameters<Id extends OperationId> = Operations[Id]["parameters"];

/** The query string after validation (a repeated parameter is an array, numbers are numbers). */
export type QueryOf<Id extends OperationId> =
  Parameters<Id> extends { query?: infer Q }
    ? [Q] extends [never | undefined]
      ? Record<string, never>
      : NonNullable<Q>
    : Record<string, never>;

/** The request body after validation; operations without one get `{}`. */
export type BodyOf<Id extends OperationId> = Operations[Id] extends { requestBody: infer B }
  ? ContentOf<B>
  : Operations[Id] extends { requestBody?: infer B }
    ? [B] extends [never | undefined]
      ? Record<string, never>
      : ContentOf<NonNullable<B>>
    : Record<string, never>;

type Status<Id extends OperationId> = keyof Operations[Id]["responses"] & number;
type Success<S> = S extends 200 | 201 | 202 | 204 ? S : never;

/** What a handler answers: one of the operation's documented 2xx statuses with its body. */
export type ReplyOf<Id extends OperationId> = {
  [S in Success<Status<Id>>]: { status: S; body: ContentOf<Operations[Id]["responses"][S]> };
}[Success<Status<Id>>];

/** The named schemas of both spec files (the admin file brings in the public ones it uses). */
export type Schemas = PublicComponents["schemas"] & AdminComponents["schemas"];
export type Schema<Name extends keyof Schemas> = Schemas[Name];
