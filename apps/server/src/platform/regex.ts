/** Text matched literally inside a regular expression (a `$regex` query, a route's pattern): its metacharacters escaped. */
export const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
