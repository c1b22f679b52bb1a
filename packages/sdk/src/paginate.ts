// What `list()` returns: awaiting it gives one page (`{ object, data, has_more }`), iterating it
// with `for await` walks every item of every page, asking for the next page with
// `starting_after` = the last id seen, as the API's cursor paging works; or, in an incremental
// pull (`updated_after`/`cursor`), with the page's `next_cursor`.

export interface Page<Item> {
  object: "list";
  data: Item[];
  has_more: boolean;
  /** In an incremental pull and a search: where the next page starts (a search's last page: null). */
  next_cursor?: string | null;
}

/** How the next page continues: after an id (newest-first lists) or at a pull's cursor. */
export type Continuation = { starting_after: string } | { cursor: string };

/** The continuation after `page`, or undefined when it is the last. */
export function continuationAfter(page: Page<{ id: string }>): Continuation | undefined {
  if (!page.has_more) return undefined;
  // A pull page may hold only deletions (`data` empty) and still have more: follow its cursor.
  if (typeof page.next_cursor === "string") return { cursor: page.next_cursor };
  const last = page.data.at(-1);
  return last ? { starting_after: last.id } : undefined;
}

export class PagePromise<P extends Page<Item>, Item extends { id: string }>
  implements PromiseLike<P>, AsyncIterable<Item>
{
  #first: Promise<P> | undefined;

  constructor(private readonly fetchPage: (next: Continuation | undefined) => Promise<P>) {}

  /** The first page, fetched once, whether awaited, iterated or both. */
  #firstPage(): Promise<P> {
    this.#first ??= this.fetchPage(undefined);
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: a page promise is awaitable on purpose.
  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.#firstPage().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<P> {
    return this.#firstPage().finally(onFinally);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    let page = await this.#firstPage();
    for (;;) {
      yield* page.data;
      const next = continuationAfter(page);
      if (!next) return;
      page = await this.fetchPage(next);
    }
  }

  /** Every item of every page, in one array (mind the size of what you list). */
  async toArray(): Promise<Item[]> {
    const items: Item[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
