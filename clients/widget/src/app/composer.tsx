import type { PostDryRunView } from '@svc/contracts/public';
import { useEffect, useState } from 'preact/hooks';
import { failureText, type Page } from './api.ts';
import type { AccountView, Ctx, PostView } from './context.ts';
import { FormatChoice, type PostFormat } from './format-choice.tsx';
import { accountName, formatTime, networkName } from './labels.ts';
import { MediaPicker, type Picked } from './media-picker.tsx';
import { Notice, type NoticeValue } from './notice.tsx';
import { type Check, Checks, refusalText } from './post-checks.tsx';
import { PostStatus } from './post-status.tsx';
import { useSentPost } from './sent-post.ts';

const OUTCOMES: Record<string, NoticeValue> = {
  published: { kind: 'ok', text: 'Your post is published.' },
  partial: { kind: 'problem', text: 'Your post was published on some accounts only.' },
  failed: { kind: 'problem', text: 'Your post could not be published.' },
};

/**
 * The publish surface: caption, images or a video (a video goes up resumably, its progress
 * shown), the format (Feed, Reel or Story), target accounts and an optional schedule. The
 * server's own checks run as a dry run while the post is written, so the per-network problems
 * show before anything is sent; once sent, each target's status follows the post's events.
 */
export function Composer({ ctx }: { ctx: Ctx }) {
  const [accounts, setAccounts] = useState<AccountView[] | null>(null);
  const [caption, setCaption] = useState('');
  const [media, setMedia] = useState<Picked[]>([]);
  const [format, setFormat] = useState<PostFormat>('feed');
  const [shareToFeed, setShareToFeed] = useState(true);
  const [targets, setTargets] = useState<string[]>([]);
  const [scheduleAt, setScheduleAt] = useState('');
  const [check, setCheck] = useState<Check>({ state: 'idle' });
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useSentPost(ctx);

  // The notice follows the sent post to its outcome (the targets' details are in PostStatus).
  useEffect(() => {
    const outcome = sent ? OUTCOMES[sent.status] : undefined;
    if (outcome) setNotice(outcome);
  }, [sent?.status]);

  useEffect(() => {
    ctx.api
      .get<Page<AccountView>>('/accounts?limit=100')
      .then((page) => setAccounts(page.data.filter((a) => a.status === 'active')))
      .catch((error) => setNotice({ kind: 'problem', text: failureText(error) }));
  }, []);

  const body = () => ({
    caption,
    media: media.map((m) => m.id),
    targets,
    format,
    ...(format === 'reel' ? { reel: { share_to_feed: shareToFeed } } : {}),
    ...(scheduleAt ? { schedule_at: new Date(scheduleAt).toISOString() } : {}),
  });

  // The checks follow the draft, a moment after the last change.
  useEffect(() => {
    if (targets.length === 0 || (!caption && media.length === 0)) return setCheck({ state: 'idle' });
    setCheck({ state: 'checking' });
    const timer = setTimeout(() => {
      ctx.api
        .post<PostDryRunView>('/posts?dry_run=true', body())
        .then((run) => setCheck({ state: 'ok', run }))
        .catch((error) => setCheck({ state: 'problem', text: refusalText(error) }));
    }, 300);
    return () => clearTimeout(timer);
  }, [caption, media, format, shareToFeed, targets, scheduleAt]);

  async function submit(event: Event) {
    event.preventDefault();
    if (busy || check.state !== 'ok') return;
    setBusy(true);
    try {
      const post = await ctx.api.post<PostView>('/posts', body());
      ctx.emit('post.created', { post });
      setSent(post);
      setNotice({
        kind: 'ok',
        text: post.schedule_at
          ? `Scheduled for ${formatTime(post.schedule_at)}.`
          : 'Your post is being published.',
      });
      for (const m of media) if (m.preview) URL.revokeObjectURL(m.preview);
      setCaption('');
      setMedia([]);
      setScheduleAt('');
    } catch (error) {
      setNotice({ kind: 'problem', text: refusalText(error) });
    } finally {
      setBusy(false);
    }
  }

  const toggle = (id: string, on: boolean) =>
    setTargets((list) => (on ? [...list, id] : list.filter((t) => t !== id)));

  return (
    <section aria-labelledby="composer-title">
      <h1 id="composer-title">New post</h1>
      <Notice notice={notice} />
      {sent && <PostStatus post={sent} accounts={accounts ?? []} />}
      <form onSubmit={submit}>
        <label for="caption">Caption</label>
        <textarea
          id="caption"
          rows={4}
          value={caption}
          onInput={(e) => setCaption((e.target as HTMLTextAreaElement).value)}
        />
        <p class="muted">{caption.length} characters</p>

        <MediaPicker
          ctx={ctx}
          media={media}
          onAdd={(picked) => setMedia((list) => [...list, picked])}
          onRemove={(id) => setMedia((list) => list.filter((m) => m.id !== id))}
          onProblem={(text) => setNotice({ kind: 'problem', text })}
        />

        <FormatChoice
          format={format}
          shareToFeed={shareToFeed}
          onFormat={setFormat}
          onShareToFeed={setShareToFeed}
        />

        <fieldset>
          <legend>Publish to</legend>
          {accounts === null ? (
            <p class="muted">Loading accounts…</p>
          ) : accounts.length === 0 ? (
            <p class="muted">No connected account: connect one first.</p>
          ) : (
            accounts.map((a) => (
              <label class="choice" key={a.id}>
                <input
                  type="checkbox"
                  checked={targets.includes(a.id)}
                  onChange={(e) => toggle(a.id, (e.target as HTMLInputElement).checked)}
                />
                <span>
                  {accountName(a)} <span class="muted">({networkName(a.network)})</span>
                </span>
              </label>
            ))
          )}
        </fieldset>

        <label for="schedule">Schedule (leave empty to publish now)</label>
        <input
          id="schedule"
          type="datetime-local"
          value={scheduleAt}
          onInput={(e) => setScheduleAt((e.target as HTMLInputElement).value)}
        />

        <Checks check={check} accounts={accounts ?? []} />
        <div class="actions">
          <button type="submit" disabled={busy || check.state !== 'ok'}>
            {busy ? 'Sending…' : scheduleAt ? 'Schedule' : 'Publish'}
          </button>
        </div>
      </form>
    </section>
  );
}
