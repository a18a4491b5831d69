import { useEffect, useState } from 'preact/hooks';
import { failureText, type Page } from './api.ts';
import type { ConversationView, Ctx } from './context.ts';
import { conversationTitle, formatTime, networkName } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';
import { RECONNECTED } from './stream.ts';
import { Thread } from './thread.tsx';

/**
 * The inbox surface: conversations with unread counts, latest first, kept current by the stream;
 * choosing one opens its thread in place (one column, readable at 320 px).
 */
export function Inbox({ ctx }: { ctx: Ctx }) {
  const [conversations, setConversations] = useState<ConversationView[] | null>(null);
  const [open, setOpen] = useState<ConversationView | null>(null);
  const [notice, setNotice] = useState<NoticeValue | null>(null);

  const load = () =>
    ctx.api
      .get<Page<ConversationView>>('/conversations?archived=false&limit=50')
      .then((page) => setConversations(page.data))
      .catch((error) => setNotice({ kind: 'problem', text: failureText(error) }));

  useEffect(() => {
    void load();
    return ctx.subscribe((event) => {
      if (/^(message|comment|conversation)\./.test(event.type) || event.type === RECONNECTED) void load();
    });
  }, []);

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
    </section>
  );
}
