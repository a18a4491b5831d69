import type { Api, CursorPage } from './api.ts';
import type { ConversationView } from './context.ts';

/** What the inbox shows: the conversations loaded so far, and where the next page starts. */
export interface LoadedConversations {
  items: ConversationView[];
  /** `next_cursor` of the last page loaded; null when every conversation is shown. */
  cursor: string | null;
}

const LIST = '/conversations?archived=false&limit=50';

/**
 * The first page again (after an event or a reconnect), kept with what "Show more" loaded beyond
 * it: a conversation with new activity is at the front of the new first page, and the others
 * loaded further down have not moved, so the cursor of the last page loaded still holds.
 * `reset` (after a reconnect, when anything may have changed) keeps the first page only.
 */
export async function reloadFirstPage(
  api: Api,
  loaded: LoadedConversations | null,
  reset = false,
): Promise<LoadedConversations> {
  const first = await api.get<CursorPage<ConversationView>>(LIST);
  if (reset || !loaded || loaded.items.length <= first.data.length || !first.has_more)
    return { items: first.data, cursor: first.next_cursor };
  const fresh = new Set(first.data.map((c) => c.id));
  const kept = loaded.items.filter((c) => !fresh.has(c.id));
  return { items: [...first.data, ...kept].sort(latestFirst), cursor: loaded.cursor };
}

/**
 * The page after the last one loaded (`starting_after`): new activity meanwhile does not shift it,
 * so nothing already shown comes again and nothing is skipped.
 */
export async function loadNextPage(api: Api, loaded: LoadedConversations): Promise<LoadedConversations> {
  if (!loaded.cursor) return loaded;
  const next = await api.get<CursorPage<ConversationView>>(
    `${LIST}&starting_after=${encodeURIComponent(loaded.cursor)}`,
  );
  const shown = new Set(loaded.items.map((c) => c.id));
  return { items: [...loaded.items, ...next.data.filter((c) => !shown.has(c.id))], cursor: next.next_cursor };
}

/** The list's order: latest activity first, conversations without messages last, then by id. */
function latestFirst(a: ConversationView, b: ConversationView): number {
  const at = (c: ConversationView) => (c.last_message_at ? Date.parse(c.last_message_at) : -1);
  return at(b) - at(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
