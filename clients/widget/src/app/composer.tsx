import type { MediaView, PostDryRunView } from '@svc/contracts/public';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, failureText, type Page } from './api.ts';
import type { AccountView, Ctx, PostView } from './context.ts';
import { accountName, formatTime, humanize, networkName } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';

interface Upload extends MediaView {
  preview: string;
  name: string;
}

type Check =
  | { state: 'idle' | 'checking' }
  | { state: 'ok'; run: PostDryRunView }
  | { state: 'problem'; text: string };

/**
 * The publish surface: caption, images (uploaded as they are picked), target accounts and an
 * optional schedule. The server's own checks run as a dry run while the post is written, so the
 * per-network problems show before anything is sent.
 */
export function Composer({ ctx }: { ctx: Ctx }) {
  const [accounts, setAccounts] = useState<AccountView[] | null>(null);
  const [caption, setCaption] = useState('');
  const [media, setMedia] = useState<Upload[]>([]);
  const [targets, setTargets] = useState<string[]>([]);
  const [scheduleAt, setScheduleAt] = useState('');
  const [check, setCheck] = useState<Check>({ state: 'idle' });
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const [busy, setBusy] = useState(false);

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
    ...(scheduleAt ? { schedule_at: new Date(scheduleAt).toISOString() } : {}),
  });

  // The checks follow the draft, a moment after the last change.
  useEffect(() => {
    if (targets.length === 0) return setCheck({ state: 'idle' });
    setCheck({ state: 'checking' });
    const timer = setTimeout(() => {
      ctx.api
        .post<PostDryRunView>('/posts?dry_run=true', body())
        .then((run) => setCheck({ state: 'ok', run }))
        .catch((error) => setCheck({ state: 'problem', text: humanize(failureText(error)) }));
    }, 300);
    return () => clearTimeout(timer);
  }, [caption, media, targets, scheduleAt]);

  async function upload(files: FileList | null) {
    for (const file of Array.from(files ?? [])) {
      const form = new FormData();
      form.append('file', file);
      try {
        const record = await ctx.api.post<MediaView>('/media', form);
        setMedia((list) => [...list, { ...record, preview: URL.createObjectURL(file), name: file.name }]);
      } catch (error) {
        setNotice({ kind: 'problem', text: `${file.name}: ${failureText(error)}` });
      }
    }
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (busy || check.state !== 'ok') return;
    setBusy(true);
    try {
      const post = await ctx.api.post<PostView>('/posts', body());
      ctx.emit('post.created', { post });
      setNotice({
        kind: 'ok',
        text: post.schedule_at
          ? `Scheduled for ${formatTime(post.schedule_at)}.`
          : 'Your post is being published.',
      });
      for (const m of media) URL.revokeObjectURL(m.preview);
      setCaption('');
      setMedia([]);
      setScheduleAt('');
    } catch (error) {
      const field = error instanceof ApiFailure && error.error.field ? ` (${error.error.field})` : '';
      setNotice({ kind: 'problem', text: humanize(failureText(error)) + field });
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
      <form onSubmit={submit}>
        <label for="caption">Caption</label>
        <textarea
          id="caption"
          rows={4}
          value={caption}
          onInput={(e) => setCaption((e.target as HTMLTextAreaElement).value)}
        />
        <p class="muted">{caption.length} characters</p>

        <label for="images">Images (JPEG, PNG or WebP)</label>
        <input
          id="images"
          type="file"
          accept="image/jpeg,image/png,image/webp"
          multiple
          onChange={(e) => upload((e.target as HTMLInputElement).files)}
        />
        {media.length > 0 && (
          <ul class="thumbs" aria-label="Images">
            {media.map((m) => (
              <li key={m.id}>
                <img src={m.preview} alt={m.name} width={64} height={64} />
                <button
                  type="button"
                  class="secondary small"
                  aria-label={`Remove ${m.name}`}
                  onClick={() => setMedia((list) => list.filter((x) => x.id !== m.id))}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}

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

function Checks({ check, accounts }: { check: Check; accounts: AccountView[] }) {
  const named = (id: string) => accounts.find((a) => a.id === id);
  return (
    <div class="checks" aria-live="polite">
      <h2>Checks</h2>
      {check.state === 'idle' && <p class="muted">Choose where to publish to run the checks.</p>}
      {check.state === 'checking' && <p class="muted">Checking…</p>}
      {check.state === 'problem' && <p class="notice problem">{check.text}</p>}
      {check.state === 'ok' && (
        <ul class="plain">
          {check.run.targets.map((t) => (
            <li key={t.account} class="check ok">
              {checkLine(named(t.account), t)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** "@name (Instagram): ready to send as carousel, converted to JPEG". */
function checkLine(account: AccountView | undefined, target: PostDryRunView['targets'][number]): string {
  const who = account ? accountName(account) : target.username;
  const converted = target.would_send.converted_to_jpeg.length > 0 ? ', converted to JPEG' : '';
  return `${who} (${networkName(target.network)}): ready to send as ${target.would_send.kind.replace('_', ' ')}${converted}`;
}
