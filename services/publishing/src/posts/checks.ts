// What a post must pass before anything is written or sent: its workspace, its targets (found,
// in the workspace, connected) and its media, against spec 3 and each network's rules.
import type { Account } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import type { PublishingContext } from '../context.ts';
import { type KnownMedia, readKnownMedia } from '../media/media.ts';
import type { PostInput } from './posts.ts';
import { checkForNetwork, type Network } from './rules.ts';
import type { MediaSummary } from './view.ts';

/**
 * The caller's live workspace, else not_found. From the workspace cache: a workspace deleted a
 * moment ago passes until its `workspace.deleted` announcement arrives (milliseconds). A check in
 * another service cannot hold the workspace against deletion anyway; the cache only widens that
 * window by the announcement's trip.
 */
export async function assertWorkspace(
  ctx: PublishingContext,
  caller: Caller,
  workspaceId: string,
): Promise<void> {
  const workspace = await ctx.workspaces.get(workspaceId);
  if (workspace.partnerId !== caller.partnerId) throw errors.notFound('workspace');
}

/**
 * The checks of spec 3 and the networks' rules: targets and media of this workspace, active
 * accounts (else 409 account_disconnected), captions and media each network accepts.
 */
export async function checkPost(
  ctx: PublishingContext,
  caller: Caller,
  input: Pick<PostInput, 'workspaceId' | 'caption' | 'mediaIds' | 'accountIds'>,
): Promise<{ accounts: Account[]; media: MediaSummary[] }> {
  if (new Set(input.accountIds).size !== input.accountIds.length)
    throw errors.validation('targets', 'each account may be targeted once');
  // The targets and the media read together; the checks then run in order.
  const [found, known] = await Promise.all([
    visibleAccounts(ctx, caller, input.accountIds),
    input.mediaIds.length > 0 ? readKnownMedia(ctx, input.mediaIds) : new Map<string, KnownMedia>(),
  ]);
  const accounts = input.accountIds.map((accountId, index) => {
    const account = found[index];
    if (!account) throw errors.validation(`targets.${index}`, `account ${accountId} not found`);
    if (account.workspaceId !== input.workspaceId)
      throw errors.validation(
        `targets.${index}`,
        `account ${accountId} is not in workspace ${input.workspaceId}`,
      );
    assertActive(account);
    return account;
  });
  const media = mediaSummaries(known, caller, input.workspaceId, input.mediaIds);
  for (const account of accounts) checkForNetwork(account.network as Network, input.caption, media);
  return { accounts, media };
}

/**
 * The accounts of these ids in the caller's scope (undefined for one that is unknown or another
 * partner's or workspace's), from the accounts publishing keeps (see kept-accounts.ts).
 */
export async function visibleAccounts(
  ctx: PublishingContext,
  caller: Caller,
  ids: string[],
): Promise<(Account | undefined)[]> {
  const known = await Promise.all(
    ids.map((id) =>
      ctx.knownAccounts.get(id).catch((error: unknown) => {
        if (error instanceof ServiceError && error.code === 'not_found') return undefined;
        throw error;
      }),
    ),
  );
  return known.map((k) =>
    k &&
    k.partnerId === caller.partnerId &&
    (!caller.workspaceId || k.account.workspaceId === caller.workspaceId)
      ? k.account
      : undefined,
  );
}

export function assertActive(account: Account): void {
  if (account.status !== 'active')
    throw new ServiceError(
      'account_disconnected',
      `account ${account.id} (@${account.username}) is ${account.status}${account.lastError ? `: ${account.lastError}` : ''}; reconnect it through a connect link`,
    );
}

/** The post's media in its order, each found in the caller's scope and of the post's workspace. */
function mediaSummaries(
  known: Map<string, KnownMedia>,
  caller: Caller,
  workspaceId: string,
  mediaIds: string[],
): MediaSummary[] {
  return mediaIds.map((id, index) => {
    const media = known.get(id);
    const visible =
      media?.partnerId === caller.partnerId &&
      (!caller.workspaceId || media.workspaceId === caller.workspaceId);
    if (!media || !visible) throw errors.validation(`media.${index}`, `media ${id} not found`);
    if (media.workspaceId !== workspaceId)
      throw errors.validation(`media.${index}`, `media ${id} is not in workspace ${workspaceId}`);
    return { id: media.id, kind: media.kind, mime: media.mime, width: media.width, height: media.height };
  });
}
