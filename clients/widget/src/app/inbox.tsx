import { useEffect, useRef, useState } from 'preact/hooks';
import { failureText } from './api.ts';
import type { ConversationView, Ctx } from './context.ts';
import { type LoadedConversations, loadNextPage, reloadFirstPage } from './conversation-pages.ts';
import { conversationTitle, formatTime, networkName } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';
import { RECONNECTED } from './stream.ts';
import { Thread } from './thread.tsx';

/**
 * The inbox surface: conversations with unread counts, latest first, kept current by the stream,
 * with "Show more" paging by cursor; choosing one opens its thread in place (one column, readable
 * at 320 px).
 */
export function Inbox({ ctx }: { ctx: Ctx }) {
  const [loaded, setLoaded] = useState<LoadedConversations | null>(null);
  const [open, setOpen] = useState<ConversationView | null>(null);
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const [busy, setBusy] = useState(false);
  // The latest state for the stream's callback, which is registered once.
  const current = useRef<LoadedConversations | null>(null);
  current.current = loaded;

  const show = (work: Promise<LoadedConversations>) =>
    work
      .then((next) => {
        current.current = next;
        setLoaded(next);
      })
      .catch((error) => setNotice({ kind: 'problem', text: failureText(error) }));
  const load = (reset = false) => show(reloadFirstPage(ctx.api, current.current, reset));
  const more = () => {
    if (!current.current) return;
    setBusy(true);
    void show(loadNextPage(ctx.api, current.current)).finally(() => setBusy(false));
  };

  useEffect(() => {
    void load();
    return ctx.subscribe((event) => {
      if (event.type === RECONNECTED) void load(true);
      else if (/^(message|comment|conversation)\./.test(event.type)) void load();
    });
  }, []);

  const conversations = loaded?.items ?? null;

  if (open)
    return (
      <Thread
        ctx={ctx}
        conversation={open}
        onBack={() => {
          setOpen(null);
          void load();
        }}
      />
    );

  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <Notice notice={notice} />
      {conversations === null ? (
        <p class="muted">Loading conversations…</p>
      ) : conversations.length === 0 ? (
        <p class="muted">No conversation yet. Messages and comments appear here as they arrive.</p>
      ) : (
        <ul class="plain" aria-label="Conversations">
          {conversations.map((c) => (
            <li key={c.id} class="row">
              <button type="button" class="conversation" onClick={() => setOpen(c)}>
                <span class="who">
                  <strong>{conversationTitle(c)}</strong>
                  <span class="muted">
                    {c.kind === 'dm' ? 'Message' : 'Comments'} · {networkName(c.network)}
                    {c.last_message_at ? ` · ${formatTime(c.last_message_at)}` : ''}
                  </span>
                </span>
                {c.unread_count > 0 && (
                  <span class="badge">
                    {c.unread_count}
                    <span class="sr-only"> unread</span>
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
      )}
      {loaded?.cursor && (
        <button type="button" class="secondary" disabled={busy} onClick={more}>
          Show more
        </button>
      )}
    </section>
  );
}
