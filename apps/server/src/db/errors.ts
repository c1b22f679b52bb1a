/** MongoDB's duplicate-key error: how we learn that a unique `_id` or index is taken. */
export function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: number } | null)?.code === 11000;
}
