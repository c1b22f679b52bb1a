/**
 * The one group commit of the server, for database calls made many times at once (the shared
 * rate limiter's takes, platform/http/rate-limit.ts; the event relay's recording and finishing,
 * events/outbox-relay.ts; the delivery worker's records, reads and lease releases): where each round trip costs more than the work it carries, the calls made
 * while one is in flight go to the database together. `gathered(run)` returns a function that
 * calls `run` at once when nothing is in flight, and otherwise gathers the calls made meanwhile
 * and passes them to `run` together when the call in flight returns.
 *
 * Every call's batch is started after the call was made, never joined to one already in
 * flight: a call therefore sees every write that finished before it was made (a take by an
 * earlier request of the same key), exactly as a call of its own would.
 */

interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * `run` gets the inputs in call order and returns one outcome per input, in the same order: a
 * value, or an Error for that input alone. If it throws, every input of the batch fails with it.
 */
export function gathered<I, O>(
  run: (inputs: I[]) => Promise<Array<O | Error>>,
  maxBatch = 100,
): (input: I) => Promise<O> {
  let waiting: Waiting<I, O>[] = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (waiting.length > 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      try {
        const outcomes = await run(batch.map((w) => w.input));
        batch.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome instanceof Error) w.reject(outcome);
          else w.resolve(outcome as O);
        });
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    flushing = false;
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (!flushing) void flush();
    });
}
