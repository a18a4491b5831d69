import type { Account } from '@svc/contracts';
import type { PostDryRunView, PostMediaView } from '@svc/contracts/public';
import type { Caller } from '@svc/db';
import { initialStatus, type PostInput } from './post-input.ts';
import type { Posts } from './posts.ts';

/**
 * `POST /v1/posts?dry_run=true`: every check a real create runs (workspace, targets, media, each
 * network's caption and media rules), then what each target would receive. Nothing is created or
 * sent, so partners can catch refusals before they happen.
 */
export async function dryRun(
  posts: Posts,
  caller: Caller,
  input: PostInput,
  now: Date,
): Promise<PostDryRunView> {
  const { accounts, media } = await posts.check(caller, input);
  return {
    dry_run: true,
    workspace: input.workspaceId,
    status: initialStatus(input, now),
    schedule_at: input.scheduleAt?.toISOString() ?? null,
    targets: accounts.map((account) => ({
      account: account.id,
      network: account.network as PostDryRunView['targets'][number]['network'],
      username: account.username,
      would_send: plan(account, input.caption, media),
    })),
  };
}

type Plan = PostDryRunView['targets'][number]['would_send'];

/** The network call(s) a target would make, in the network's own terms. */
function plan(account: Account, caption: string, media: PostMediaView[]): Plan {
  const ids = media.map((m) => m.id);
  if (account.network === 'photo_network') {
    // PNG and WebP are converted to JPEG for Instagram at publish time.
    const converted = media.filter((m) => m.mime !== 'image/jpeg').map((m) => m.id);
    return {
      kind: media.length > 1 ? 'carousel' : 'image',
      caption,
      media: ids,
      converted_to_jpeg: converted,
    };
  }
  const kind = media.length === 0 ? 'text' : media.length === 1 ? 'photo' : 'multi_photo';
  return { kind, caption, media: ids, converted_to_jpeg: [] };
}
