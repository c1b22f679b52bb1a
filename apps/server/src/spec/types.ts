import type { components as AdminComponents, operations as AdminOperations } from "@deskline/spec/admin";
import type { components as PublicComponents, operations as PublicOperations } from "@deskline/spec/openapi";
import type { ContentOf, BodyOf as OperationBody, QueryOf as OperationQuery } from "@deskline/spec/operation";

/**
 * The request and response types of every spec operation, looked up by `operationId`, so a
 * handler is checked by tsc against the contract it serves (types from @deskline/spec).
 */
export type Operations = PublicOperations & AdminOperations;
export type OperationId = keyof Operations & string;

/** The query string after validation (a repeated parameter is an array, numbers are numbers). */
export type QueryOf<Id extends OperationId> = OperationQuery<Operations[Id]>;

/** The request body after validation; operations without one get `{}`. */
export type BodyOf<Id extends OperationId> = OperationBody<Operations[Id], Record<string, never>>;

type Status<Id extends OperationId> = keyof Operations[Id]["responses"] & number;
type Success<S> = S extends 200 | 201 | 202 | 204 ? S : never;

/** What a handler answers: one of the operation's documented 2xx statuses with its body. */
export type ReplyOf<Id extends OperationId> = {
  [S in Success<Status<Id>>]: { status: S; body: ContentOf<Operations[Id]["responses"][S]> };
}[Success<Status<Id>>];

/** The named schemas of both spec files (the admin file brings in the public ones it uses). */
export type Schemas = PublicComponents["schemas"] & AdminComponents["schemas"];
export type Schema<Name extends keyof Schemas> = Schemas[Name];
