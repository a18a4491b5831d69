import type { Account } from '@svc/contracts';
import type { Caller } from '@svc/db';
import type { PublishingContext } from '../context.ts';
import { checkPost } from './checks.ts';
import type { PostInput } from './posts.ts';
import type { MediaSummary } from './view.ts';

/**
 * `POST /v1/posts?dry_run=true`: every check a real create runs (workspace, targets, media, each
 * network's caption and media rules), then what each target would receive. Nothing is created or
 * sent, so partners can catch refusals before they happen.
 */
export async function dryRun(ctx: PublishingContext, caller: Caller, input: PostInput) {
  await ctx.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId: input.workspaceId });
  const { accounts, media } = await checkPost(ctx, caller, input);
  return {
    dry_run: true,
    workspace: input.workspaceId,
    status: input.draft
      ? 'draft'
      : input.scheduleAt && input.scheduleAt > ctx.now()
        ? 'scheduled'
        : 'publishing',
    schedule_at: input.scheduleAt?.toISOString() ?? null,
    targets: accounts.map((account) => ({
      account: account.id,
      network: account.network,
      username: account.username,
      would_send: plan(account, input.caption, media),
    })),
  };
}

/** The network call(s) a target would make, in the network's own terms. */
function plan(account: Account, caption: string, media: MediaSummary[]) {
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
