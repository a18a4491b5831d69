import type { AccountView, PostView } from './context.ts';
import { accountName, humanize, networkName } from './labels.ts';

const STATUS_TEXT: Record<string, string> = {
  pending: 'waiting to be sent',
  publishing: 'publishing…',
  published: 'published',
  failed: 'failed',
};

/**
 * The post just sent, target by target, as its `post.*` events tell: in flight, then published
 * with the network's link (a Reel's is its /reel/ page) or failed with the network's reason.
 */
export function PostStatus({ post, accounts }: { post: PostView; accounts: AccountView[] }) {
  const named = (id: string) => accounts.find((a) => a.id === id);
  return (
    <div class="post-status" aria-live="polite">
      <h2>Sent post</h2>
      <ul class="plain">
        {post.targets.map((t) => {
          const account = named(t.account);
          const who = account ? accountName(account) : t.username;
          return (
            <li key={t.account} class={`target ${t.status}`}>
              {who} ({networkName(t.network)}, {t.format}): {STATUS_TEXT[t.status] ?? t.status}
              {t.permalink && (
                <>
                  {' '}
                  <a href={t.permalink} target="_blank" rel="noopener noreferrer">
                    View on {networkName(t.network)}
                  </a>
                </>
              )}
              {t.error && <span class="muted"> {humanize(t.error)}</span>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
