import type { Account } from '@svc/contracts';
import { type Caller, found, pageWindow, visibleTo } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import { newId } from '@svc/ids';
import type { PublishingContext } from '../context.ts';
import { publishJobRow, writeOutbox } from '../events.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { checkForNetwork, type Network } from './rules.ts';
import type { MediaSummary, PostWithTargets } from './view.ts';

/**
 * Posts: create (draft, scheduled or publishing at once), read, list, patch and publish. Every
 * check runs before anything is sent; publishing writes one job per target into the outbox in
 * the same transaction, so a crash never loses a post nor queues it twice.
 */
export interface PostInput {
  workspaceId: string;
  caption: string;
  mediaIds: string[];
  accountIds: string[];
  scheduleAt: Date | null;
  externalRef: string | null;
  options: Record<string, unknown>;
  draft: boolean;
  createdBy: string;
}

const withTargets = { targets: true } as const;

export async function getPost(ctx: PublishingContext, caller: Caller, id: string): Promise<PostWithTargets> {
  return found(
    await ctx.db.post.findFirst({ where: { id, ...visibleTo(caller) }, include: withTargets }),
    'post',
  );
}

export async function createPost(
  ctx: PublishingContext,
  caller: Caller,
  input: PostInput,
): Promise<PostWithTargets> {
  await ctx.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId: input.workspaceId });
  const { accounts, media } = await checkPost(ctx, caller, input);
  const now = ctx.now();
  const status = input.draft
    ? 'draft'
    : input.scheduleAt && input.scheduleAt > now
      ? 'scheduled'
      : 'publishing';
  const id = newId('post');
  return ctx.db
    .$transaction(async (tx) => {
      await lockMedia(tx, input.mediaIds);
      await tx.post.create({
        data: {
          id,
          partnerId: caller.partnerId,
          workspaceId: input.workspaceId,
          externalRef: input.externalRef,
          caption: input.caption,
          mediaIds: input.mediaIds,
          media: media as unknown as Prisma.InputJsonArray,
          scheduleAt: input.scheduleAt,
          status,
          attempts: status === 'publishing' ? 1 : 0,
          createdBy: input.createdBy,
          options: input.options as Prisma.InputJsonObject,
          targets: {
            create: accounts.map((account, position) => ({
              accountId: account.id,
              position,
              network: account.network,
              username: account.username,
              status: 'pending',
            })),
          },
        },
      });
      if (status === 'publishing')
        await writeOutbox(tx, { jobs: accounts.map((a) => publishJobRow(id, a.id, 1)) });
      return tx.post.findUniqueOrThrow({ where: { id }, include: withTargets });
    })
    .finally(() => ctx.relay.kick());
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
  const accounts: Account[] = [];
  for (const [index, accountId] of input.accountIds.entries()) {
    const account = await ctx.accounts
      .getAccount({ caller, accountId })
      .then((r) => r.account)
      .catch((error: unknown) => {
        if (error instanceof ServiceError && error.code === 'not_found')
          throw errors.validation(`targets.${index}`, `account ${accountId} not found`);
        throw error;
      });
    if (!account || account.workspaceId !== input.workspaceId)
      throw errors.validation(
        `targets.${index}`,
        `account ${accountId} is not in workspace ${input.workspaceId}`,
      );
    assertActive(account);
    accounts.push(account);
  }
  const media = await mediaSummaries(ctx, caller, input.workspaceId, input.mediaIds);
  for (const account of accounts) checkForNetwork(account.network as Network, input.caption, media);
  return { accounts, media };
}

export function assertActive(account: Account): void {
  if (account.status !== 'active')
    throw new ServiceError(
      'account_disconnected',
      `account ${account.id} (@${account.username}) is ${account.status}${account.lastError ? `: ${account.lastError}` : ''}; reconnect it through a connect link`,
    );
}

async function mediaSummaries(
  ctx: PublishingContext,
  caller: Caller,
  workspaceId: string,
  mediaIds: string[],
): Promise<MediaSummary[]> {
  const rows = await ctx.db.media.findMany({ where: { id: { in: mediaIds }, ...visibleTo(caller) } });
  return mediaIds.map((id, index) => {
    const row = rows.find((m) => m.id === id);
    if (!row) throw errors.validation(`media.${index}`, `media ${id} not found`);
    if (row.workspaceId !== workspaceId)
      throw errors.validation(`media.${index}`, `media ${id} is not in workspace ${workspaceId}`);
    return { id: row.id, kind: row.kind, mime: row.mime, width: row.width, height: row.height };
  });
}

/**
 * Holds the post's media against a concurrent delete until the post is written (media delete
 * refuses media of unpublished posts, but only once it can see the post).
 */
async function lockMedia(tx: Prisma.TransactionClient, mediaIds: string[]): Promise<void> {
  if (mediaIds.length === 0) return;
  const rows = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM media WHERE id = ANY(${mediaIds}) FOR SHARE`;
  if (rows.length !== new Set(mediaIds).size)
    throw errors.validation('media', 'a media item was deleted meanwhile');
}

export async function listPosts(
  ctx: PublishingContext,
  caller: Caller,
  query: {
    workspaceId: string;
    status: string;
    externalRef: string;
    accountId: string;
    createdAfter: string;
    createdBefore: string;
    page: number;
    limit: number;
  },
): Promise<{ posts: PostWithTargets[]; total: number }> {
  const where: Prisma.PostWhereInput = {
    ...visibleTo(caller),
    ...(query.workspaceId ? { workspaceId: query.workspaceId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.externalRef ? { externalRef: query.externalRef } : {}),
    ...(query.accountId ? { targets: { some: { accountId: query.accountId } } } : {}),
    ...(query.createdAfter || query.createdBefore
      ? {
          createdAt: {
            ...(query.createdAfter ? { gt: new Date(query.createdAfter) } : {}),
            ...(query.createdBefore ? { lt: new Date(query.createdBefore) } : {}),
          },
        }
      : {}),
  };
  const [posts, total] = await Promise.all([
    ctx.db.post.findMany({
      where,
      include: withTargets,
      orderBy: { id: 'asc' },
      ...pageWindow(query.page, query.limit),
    }),
    ctx.db.post.count({ where }),
  ]);
  return { posts, total };
}

export interface PostPatch {
  caption?: string | undefined;
  mediaIds?: string[] | undefined;
  accountIds?: string[] | undefined;
  /** undefined: unchanged; null: cleared. */
  scheduleAt?: Date | null | undefined;
  externalRef?: string | undefined;
  options?: Record<string, unknown> | undefined;
}

const EDITABLE = ['draft', 'scheduled', 'failed', 'partial'];

/** PATCH: a published or publishing post is a conflict; the result is checked like a new post. */
export async function updatePost(
  ctx: PublishingContext,
  caller: Caller,
  id: string,
  patch: PostPatch,
): Promise<PostWithTargets> {
  const post = await getPost(ctx, caller, id);
  if (!EDITABLE.includes(post.status))
    throw errors.conflict(
      `a ${post.status} post cannot be changed; only draft, scheduled, failed or partial posts can`,
    );
  if (patch.accountIds && post.targets.some((t) => t.status === 'published'))
    throw errors.conflict('targets cannot be replaced once one of them is published');
  const next = {
    workspaceId: post.workspaceId,
    caption: patch.caption ?? post.caption,
    mediaIds: patch.mediaIds ?? post.mediaIds,
    accountIds:
      patch.accountIds ?? [...post.targets].sort((a, b) => a.position - b.position).map((t) => t.accountId),
  };
  const unsettled = post.targets.filter((t) => t.status !== 'published').map((t) => t.accountId);
  const { accounts, media } = await checkPost(ctx, caller, {
    ...next,
    // Published targets are never posted again: only the others must still be reachable.
    accountIds: patch.accountIds ?? next.accountIds.filter((a) => unsettled.includes(a)),
  });
  const scheduleAt = patch.scheduleAt === undefined ? post.scheduleAt : patch.scheduleAt;
  // A scheduled post without a time becomes a draft; drafts stay drafts until published.
  const status = post.status === 'scheduled' && !scheduleAt ? 'draft' : post.status;
  return ctx.db.$transaction(async (tx) => {
    await lockMedia(tx, next.mediaIds);
    if (patch.accountIds) {
      await tx.postTarget.deleteMany({ where: { postId: id } });
      await tx.postTarget.createMany({
        data: accounts.map((account, position) => ({
          postId: id,
          accountId: account.id,
          position,
          network: account.network,
          username: account.username,
          status: 'pending',
        })),
      });
    }
    await tx.post.update({
      where: { id },
      data: {
        caption: next.caption,
        mediaIds: next.mediaIds,
        media: media as unknown as Prisma.InputJsonArray,
        scheduleAt,
        status,
        externalRef: patch.externalRef ?? post.externalRef,
        options: (patch.options ?? post.options) as Prisma.InputJsonObject,
      },
    });
    return tx.post.findUniqueOrThrow({ where: { id }, include: withTargets });
  });
}

/**
 * Publish now: a draft or scheduled post starts; a failed or partial post retries only its
 * targets that did not publish (a published target is never posted again).
 */
export async function publishPost(
  ctx: PublishingContext,
  caller: Caller,
  id: string,
): Promise<PostWithTargets> {
  const post = await getPost(ctx, caller, id);
  if (post.status === 'publishing') throw errors.conflict('this post is already publishing');
  if (post.status === 'published') throw errors.conflict('this post is already published');
  const retry = post.targets.filter((t) => t.status !== 'published');
  for (const target of retry) {
    const { account } = await ctx.accounts.getAccount({ caller, accountId: target.accountId });
    if (account) assertActive(account);
  }
  const attempt = post.attempts + 1;
  const claimed = await ctx.db.$transaction(async (tx) => {
    // Only one caller moves the post to publishing, whatever the concurrency.
    const moved = await tx.post.updateMany({
      where: { id, status: post.status },
      data: { status: 'publishing', attempts: attempt, lastError: null },
    });
    if (moved.count === 0) return false;
    // Known edge: a publish whose answer was lost and that lands at the network more than the
    // worker's grace period (pipeline/unknown-outcome.ts) after it failed the target would be
    // posted again here, since the retry starts from a fresh container.
    await tx.postTarget.updateMany({
      where: { postId: id, status: { not: 'published' } },
      data: { status: 'pending', error: null, containerId: null, publishSentAt: null },
    });
    await writeOutbox(tx, { jobs: retry.map((t) => publishJobRow(id, t.accountId, attempt)) });
    return true;
  });
  if (!claimed) throw errors.conflict('this post changed meanwhile; read it again');
  ctx.relay.kick();
  return getPost(ctx, caller, id);
}
