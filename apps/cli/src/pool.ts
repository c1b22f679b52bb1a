// Runs work over a stream with at most `concurrency` items in flight. Workers pull the next item
// only when they are free, so a fast reader never runs ahead of a slow server (back-pressure),
// and memory holds `concurrency` items whatever the input's size.

/**
 * Calls `work` for each item, `concurrency` at a time. An error thrown by `work` stops the others
 * from taking new items and is rethrown once the ones in flight have finished.
 */
export async function forEachConcurrent<T>(
  items: AsyncIterable<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  // An async generator queues concurrent next() calls, so workers can share one iterator.
  const iterator = items[Symbol.asyncIterator]();
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure) {
      const next = await iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, concurrency) }, worker);
  const results = await Promise.allSettled(workers);
  if (failure) {
    await iterator.return?.();
    throw failure.error;
  }
  const rejected = results.find((result) => result.status === "rejected");
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
}
