// The request helper types of one generated operation (`operations["createContact"]`,
// `paths["/open/v1/contacts"]["get"]`), written once for the server's handlers and the SDK's
// methods alike. Hand-written (the only file here that is): the rest of the package is generated.

/** The body of a request or response: its one content type's schema. */
export type ContentOf<T> = T extends { content: infer C } ? C[keyof C] : undefined;

/**
 * The query parameters of an operation, as they reach a handler or leave a caller (a repeated
 * parameter is an array, numbers are numbers); `Record<string, never>` when it takes none.
 */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } }
  ? [NonNullable<Q>] extends [never]
    ? Record<string, never>
    : NonNullable<Q>
  : Record<string, never>;

/**
 * The request body of an operation; `None` when it takes none: the SDK keeps `never` (a method
 * of such an operation accepts no body), the server `Record<string, never>` (a handler reads
 * nothing from it).
 */
export type BodyOf<O, None = never> = O extends { requestBody?: infer B }
  ? [NonNullable<B>] extends [never]
    ? None
    : ContentOf<NonNullable<B>>
  : None;
