import { useEffect, useRef, useState } from 'preact/hooks';
import { failureText, type Page } from './api.ts';
import { type ConversationView, type Ctx, eventData, type MessageView } from './context.ts';
import { conversationTitle, formatTime } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';
import { ReplyBox } from './reply-box.tsx';

const PAGE_SIZE = 100;

/**
 * One conversation: its messages, oldest first (the latest page), live additions from the stream,
 * and the reply box. Opening it marks it read.
 */
export function Thread(props: { ctx: Ctx; conversation: ConversationView; onBack(): void }) {
  const { ctx } = props;
  const [conversation, setConversation] = useState(props.conversation);
  const [messages, setMessages] = useState<MessageView[] | null>(null);
  const [replyTo, setReplyTo] = useState<MessageView | null>(null);
  const [privateTo, setPrivateTo] = useState<MessageView | null>(null);
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const id = conversation.id;

  // A message already shown is replaced: `message.updated` carries it as it is now (edited, unsent...).
  const add = (message: MessageView) =>
    setMessages((list) =>
      list?.some((m) => m.id === message.id)
        ? list.map((m) => (m.id === message.id ? message : m))
        : [...(list ?? []), message],
    );

  useEffect(() => {
    heading.current?.focus();
    void loadLatest(ctx, id)
      .then(setMessages)
      .catch((error) => setNotice({ kind: 'problem', text: failureText(error) }));
    void ctx.api
      .patch<ConversationView>(`/conversations/${id}`, { read: true })
      .then(setConversation)
      .catch(() => undefined);
    return ctx.subscribe((event) => {
      const { message, conversation: changed } = eventData(event);
      if (changed?.id === id) setConversation(changed);
      if (message?.conversation === id) add(message);
    });
  }, [id]);

  const sent = (message: MessageView) => {
    add(message);
    setReplyTo(null);
    setPrivateTo(null);
    ctx.emit('message.sent', { message });
  };

  return (
    <section aria-labelledby="thread-title">
      <button type="button" class="link" onClick={props.onBack}>
        ← Back to conversations
      </button>
      <h1 id="thread-title" tabIndex={-1} ref={heading}>
        {conversationTitle(conversation)}
      </h1>
      <Notice notice={notice} />
      {messages === null ? (
        <p class="muted">Loading messages…</p>
      ) : (
        <ol class="messages" aria-label="Messages" aria-live="polite">
          {messages.map((m) => (
            <MessageItem
              key={m.id}
              message={m}
              onReply={conversation.kind === 'comments' ? () => setReplyTo(m) : undefined}
              onPrivateReply={() => setPrivateTo(m)}
            />
          ))}
        </ol>
      )}
      <ReplyBox
        ctx={ctx}
        conversation={conversation}
        replyTo={replyTo}
        privateTo={privateTo}
        onCancel={() => {
          setReplyTo(null);
          setPrivateTo(null);
        }}
        onSent={sent}
      />
    </section>
  );
}

function MessageItem(props: {
  message: MessageView;
  onReply?: (() => void) | undefined;
  onPrivateReply(): void;
}) {
  const m = props.message;
  const who =
    m.direction === 'outbound' ? 'You' : (m.from?.name ?? (m.from?.handle ? `@${m.from.handle}` : 'Them'));
  const canReply = m.direction === 'inbound' && m.kind === 'comment';
  return (
    <li class={`message ${m.direction}`}>
      <span class="muted">
        {who} · {formatTime(m.created_at)}
        {m.kind === 'private_reply' ? ' · private reply' : ''}
      </span>
      <MessageBody message={m} />
      {canReply && (
        <div class="actions">
          {props.onReply && (
            <button type="button" class="secondary small" onClick={props.onReply}>
              Reply
            </button>
          )}
          {m.private_reply?.state === 'available' && (
            <button type="button" class="secondary small" onClick={props.onPrivateReply}>
              Reply privately
            </button>
          )}
          {m.private_reply?.state === 'sent' && <span class="muted">Private reply sent</span>}
        </div>
      )}
    </li>
  );
}

/** What a message says, or what became of it: unsent or removed, edited, hidden, not shown by the network. */
function MessageBody({ message: m }: { message: MessageView }) {
  if (m.deleted_at) return <p class="muted">{m.kind === 'message' ? 'Message unsent' : 'Comment removed'}</p>;
  if (m.unsupported && !m.text) return <p class="muted">A message this network does not show here</p>;
  const notes = [
    m.story ? 'replied to your story' : '',
    m.edited_at ? 'edited' : '',
    m.hidden ? 'hidden' : '',
  ];
  const reactions = m.reactions.map((r) => r.emoji ?? r.reaction).join(' ');
  return (
    <>
      <p>{m.text ?? (m.attachments.length > 0 ? '(attachment)' : '')}</p>
      {(notes.some(Boolean) || reactions) && (
        <span class="muted">{[...notes.filter(Boolean), reactions].filter(Boolean).join(' · ')}</span>
      )}
    </>
  );
}

/** The newest page: the list is oldest first, so a long thread is read from its last page. */
async function loadLatest(ctx: Ctx, id: string): Promise<MessageView[]> {
  const path = `/conversations/${id}/messages?limit=${PAGE_SIZE}`;
  const first = await ctx.api.get<Page<MessageView>>(path);
  if (first.total <= PAGE_SIZE) return first.data;
  const last = Math.ceil(first.total / PAGE_SIZE);
  return (await ctx.api.get<Page<MessageView>>(`${path}&page=${last}`)).data;
}
