import { useState } from 'preact/hooks';
import { failureText } from './api.ts';
import type { ConversationView, Ctx, MessageView } from './context.ts';
import { formatTime, humanize } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';

/**
 * The reply box under a thread. For direct messages it says whether the 24-hour window is open
 * (and offers the 7-day human-agent reply when only that is left); for comments it answers the
 * chosen comment, or the post; a private reply answers one comment by direct message.
 */
export function ReplyBox(props: {
  ctx: Ctx;
  conversation: ConversationView;
  replyTo: MessageView | null;
  privateTo: MessageView | null;
  onCancel(): void;
  onSent(message: MessageView): void;
}) {
  const { ctx, conversation, replyTo, privateTo } = props;
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const window = conversation.reply_window;
  const agentOpen = !!window?.human_agent_until && Date.parse(window.human_agent_until) > Date.now();
  const closed = conversation.kind === 'dm' && !window?.open && !agentOpen && !privateTo;

  async function send(event: Event) {
    event.preventDefault();
    if (!text.trim() || busy) return;
    setBusy(true);
    setNotice(null);
    try {
      const message = privateTo
        ? await ctx.api.post<MessageView>(`/messages/${privateTo.id}/private-reply`, { text })
        : await ctx.api.post<MessageView>(`/conversations/${conversation.id}/messages`, {
            text,
            ...(replyTo ? { reply_to: replyTo.id } : {}),
            ...(conversation.kind === 'dm' && !window?.open && agentOpen ? { tag: 'human_agent' } : {}),
          });
      setText('');
      setNotice({ kind: 'ok', text: 'Sent.' });
      props.onSent(message);
    } catch (error) {
      setNotice({ kind: 'problem', text: humanize(failureText(error)) });
    } finally {
      setBusy(false);
    }
  }

  const label = privateTo
    ? 'Private reply (sent as a direct message)'
    : replyTo
      ? `Reply to ${replyTo.from?.name ?? 'the comment'}`
      : conversation.kind === 'dm'
        ? 'Your message'
        : 'Comment on the post';
  return (
    <form class="reply" onSubmit={send}>
      {conversation.kind === 'dm' && !privateTo && (
        <WindowState conversation={conversation} agentOpen={agentOpen} />
      )}
      <label for="reply-text">{label}</label>
      <textarea
        id="reply-text"
        rows={3}
        value={text}
        disabled={closed}
        maxLength={privateTo ? 2000 : 8000}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      <div class="actions">
        <button type="submit" disabled={closed || busy || !text.trim()}>
          {busy ? 'Sending…' : privateTo ? 'Send private reply' : 'Send'}
        </button>
        {(replyTo || privateTo) && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
      <Notice notice={notice} />
    </form>
  );
}

function WindowState({ conversation, agentOpen }: { conversation: ConversationView; agentOpen: boolean }) {
  const window = conversation.reply_window;
  if (window?.open)
    return (
      <p class="window open">
        Reply window open{window.closes_at ? ` until ${formatTime(window.closes_at)}` : ''}.
      </p>
    );
  if (agentOpen)
    return (
      <p class="window agent">
        The 24-hour window is closed; a human-agent reply is allowed until{' '}
        {formatTime(window?.human_agent_until)}.
      </p>
    );
  return (
    <p class="window closed">
      The 24-hour reply window is closed. You can answer when this person writes again.
    </p>
  );
}
