/** What every list answers, with the cursor fields of the lists that page by cursor (conversations). */
export interface ListPage<T> {
  data: T[];
  page: number;
  limit: number;
  total: number;
  /** Cursor lists: more items follow this page. */
  has_more?: boolean;
  /** Cursor lists: pass it as `starting_after` for the next page; null at the end. */
  next_cursor?: string | null;
}

/** Where the next page starts: a cursor (`starting_after`) or a page number. */
export type PageRequest = { starting_after: string } | { page: number };

/**
 * Every item of a list, page after page. `read` fetches one page, given where it starts (spread
 * it into the call's query). A list that answers `next_cursor` is followed by cursor, so activity
 * while paging neither repeats nor skips the items that did not change (a conversation with new
 * activity moves to the front and is not listed again); other lists go by page number until
 * `total` is reached.
 *
 * ```ts
 * for await (const conversation of paginate((at) =>
 *   api.listConversations({ params: { query: { workspace, limit: 200, ...at } } }),
 * )) console.log(conversation.id);
 * ```
 */
export async function* paginate<T>(read: (at: PageRequest) => Promise<ListPage<T>>): AsyncGenerator<T> {
  let at: PageRequest = { page: 1 };
  for (;;) {
    const page = await read(at);
    yield* page.data;
    const next = nextPage(page);
    if (!next) return;
    at = next;
  }
}

/** Where the page after this one starts, or undefined after the last. */
function nextPage<T>(page: ListPage<T>): PageRequest | undefined {
  if (page.next_cursor !== undefined || page.has_more !== undefined)
    return page.has_more && page.next_cursor ? { starting_after: page.next_cursor } : undefined;
  if (page.data.length === 0 || page.page * page.limit >= page.total) return undefined;
  return { page: page.page + 1 };
}
