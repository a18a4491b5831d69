import type { Account } from '@svc/contracts';
import type { PostDryRunView, PostFormat, PostMediaView } from '@svc/contracts/public';
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
    targets: accounts.map((account, index) => {
      const format = input.formats[index] ?? 'feed';
      return {
        account: account.id,
        network: account.network as PostDryRunView['targets'][number]['network'],
        username: account.username,
        format,
        would_send: plan(account, format, input.caption, media),
      };
    }),
  };
}

type Plan = PostDryRunView['targets'][number]['would_send'];

/** The network call(s) a target would make, in the network's own terms. */
function plan(account: Account, format: PostFormat, caption: string, media: PostMediaView[]): Plan {
  const ids = media.map((m) => m.id);
  // A Story takes no caption (facts §2.2): none is sent.
  const sentCaption = format === 'story' ? '' : caption;
  if (account.network === 'photo_network') {
    // PNG and WebP images are converted to JPEG for Instagram at publish time.
    const converted = media.filter((m) => m.kind === 'image' && m.mime !== 'image/jpeg').map((m) => m.id);
    const kind = format !== 'feed' ? format : media.length > 1 ? 'carousel' : 'image';
    return { kind, caption: sentCaption, media: ids, converted_to_jpeg: converted };
  }
  return { kind: pageKind(format, media), caption: sentCaption, media: ids, converted_to_jpeg: [] };
}

function pageKind(format: PostFormat, media: PostMediaView[]): Plan['kind'] {
  if (format !== 'feed') return format;
  if (media.some((m) => m.kind === 'video')) return 'video';
  if (media.length === 0) return 'text';
  return media.length === 1 ? 'photo' : 'multi_photo';
}
