import { assertIgAccess, assertPageAccess, requirePageToken, requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { commentEvent } from '../events.ts';
import { type FieldSpec, type NodeShape, paginate, renderNode } from '../fields.ts';
import { invalidParam, pageTokenRequired, unsupportedGet } from '../graph-errors.ts';
import { optionalString, requireString } from '../params.ts';
import type { Comment, Platform } from '../store.ts';
import type { World } from '../world.ts';
import { productTypeOf } from './instagram-media.ts';
import { record } from './send.ts';

export type NewComment = Omit<Comment, 'id' | 'createdAt' | 'privateReplyAt' | 'hidden'>;

/** Stores a comment and sends Meta's webhook for it, for the account's own comments too (facts §5.6, §5.8). */
export async function addComment(world: World, input: NewComment) {
  const id =
    input.platform === 'instagram'
      ? world.ids.igComment()
      : `${input.objectId.split('_')[1] ?? input.objectId}_${world.ids.pageCommentPart()}`;
  const comment: Comment = {
    id,
    ...input,
    createdAt: world.clock.now(),
    hidden: false,
    privateReplyAt: null,
  };
  world.store.comments.set(id, comment);
  const webhook = await world.webhooks.sendEvent(commentEvent(world, comment));
  return { comment, webhook };
}

/** Replies go to top-level comments only (facts §4.7). */
export function checkParent(world: World, objectId: string, parentId: string | null): void {
  if (parentId === null) return;
  const parent = world.store.comments.get(parentId);
  if (!parent || parent.objectId !== objectId || parent.parentId !== null || parent.hidden) {
    throw invalidParam('(#100) Replies can only be made to visible top-level comments of this object');
  }
}

function commentShape(world: World, c: Comment): NodeShape {
  // Nested `replies{…}` / `comments{…}` render each reply with the nested selection.
  const replies = (spec: FieldSpec) => ({
    data: childrenOf(world, c.id).map((r) => renderNode(commentShape(world, r), spec.sub)),
  });
  const common = { id: () => c.id, like_count: () => 0 };
  if (c.platform === 'instagram') {
    return {
      type: 'IGComment',
      defaults: ['id', 'text', 'timestamp'],
      fields: {
        ...common,
        text: () => c.text,
        timestamp: () => graphTime(c.createdAt),
        username: () => c.fromName,
        from: () => ({ id: c.fromId, username: c.fromName }),
        hidden: () => c.hidden,
        parent_id: () => c.parentId ?? undefined,
        media: () => ({ id: c.objectId, media_product_type: productTypeOf(world, c.objectId) }),
        replies,
      },
    };
  }
  return {
    type: 'Comment',
    defaults: ['created_time', 'from', 'message', 'id'],
    fields: {
      ...common,
      message: () => c.text,
      created_time: () => graphTime(c.createdAt),
      from: () => ({ id: c.fromId, name: c.fromName }),
      parent: () => (c.parentId ? { id: c.parentId } : undefined),
      is_hidden: () => c.hidden,
      can_hide: () => c.fromId !== c.accountId,
      can_reply_privately: () => c.fromId !== c.accountId && c.privateReplyAt === null,
      comment_count: () => childrenOf(world, c.id).length,
      comments: replies,
      attachment: () => undefined,
    },
  };
}

function childrenOf(world: World, parentId: string): Comment[] {
  return [...world.store.comments.values()].filter((c) => c.parentId === parentId).reverse();
}

function listComments(ctx: Ctx, items: Comment[]) {
  return paginate(items, ctx.pageRequest(), (c) => renderNode(commentShape(ctx.world, c), ctx.fields));
}

function topLevel(world: World, objectId: string, all: boolean): Comment[] {
  return [...world.store.comments.values()]
    .filter((c) => c.objectId === objectId && (all || c.parentId === null))
    .reverse();
}

/** Commenting as the account: IG needs instagram_manage_comments, Pages need a page token with pages_manage_engagement. */
async function commentAs(ctx: Ctx, platform: Platform, objectId: string, parentId: string | null) {
  const { world } = ctx;
  const text = requireString(ctx.params, 'message');
  const accountId =
    platform === 'instagram'
      ? (world.store.igMedia.get(objectId)?.igId ?? '')
      : (world.store.pagePosts.get(objectId)?.pageId ?? '');
  if (platform === 'instagram') {
    requireScope(assertIgAccess(world, ctx.caller(), accountId), 'instagram_manage_comments', 10);
  } else {
    requireScope(requirePageToken(ctx.caller(), accountId, pageTokenRequired), 'pages_manage_engagement');
  }
  checkParent(world, objectId, parentId);
  const fromName =
    platform === 'instagram'
      ? (world.store.igAccounts.get(accountId)?.username ?? '')
      : (world.store.pages.get(accountId)?.name ?? '');
  const { comment, webhook } = await addComment(world, {
    platform,
    accountId,
    objectId,
    parentId,
    fromId: accountId,
    fromName,
    text,
  });
  record(ctx, {
    type: parentId ? 'comment_reply' : 'comment',
    platform,
    accountId,
    id: comment.id,
    objectId: parentId ?? objectId,
    text,
    webhookId: webhook.id,
  });
  return { id: comment.id };
}

function commentOr404(ctx: Ctx, id: string): Comment {
  const c = ctx.world.store.comments.get(id);
  if (!c) throw unsupportedGet(id);
  return c;
}

function assertCommentRead(ctx: Ctx, c: Comment): void {
  if (c.platform === 'instagram')
    requireScope(assertIgAccess(ctx.world, ctx.caller(), c.accountId), 'instagram_manage_comments', 10);
  else assertPageAccess(ctx.world, ctx.caller(), c.accountId);
}

export const commentRoutes: RouteTable = {
  'GET ig_media/comments': (ctx, mediaId) => {
    const media = ctx.world.store.igMedia.get(mediaId);
    requireScope(assertIgAccess(ctx.world, ctx.caller(), media?.igId ?? ''), 'instagram_manage_comments', 10);
    return listComments(ctx, topLevel(ctx.world, mediaId, false));
  },
  'POST ig_media/comments': (ctx, mediaId) => commentAs(ctx, 'instagram', mediaId, null),
  'GET page_post/comments': (ctx, postId) => {
    const post = ctx.world.store.pagePosts.get(postId);
    assertPageAccess(ctx.world, ctx.caller(), post?.pageId ?? '');
    return listComments(ctx, topLevel(ctx.world, postId, optionalString(ctx.params, 'filter') === 'stream'));
  },
  'POST page_post/comments': (ctx, postId) => commentAs(ctx, 'messenger', postId, null),
  'GET comment': (ctx, id) => {
    const c = commentOr404(ctx, id);
    assertCommentRead(ctx, c);
    return renderNode(commentShape(ctx.world, c), ctx.fields);
  },
  'GET comment/replies': (ctx, id) => {
    const c = commentOr404(ctx, id);
    assertCommentRead(ctx, c);
    return listComments(ctx, childrenOf(ctx.world, id));
  },
  'GET comment/comments': (ctx, id) => {
    const c = commentOr404(ctx, id);
    assertCommentRead(ctx, c);
    return listComments(ctx, childrenOf(ctx.world, id));
  },
  'POST comment/replies': (ctx, id) => {
    const c = commentOr404(ctx, id);
    if (c.platform !== 'instagram') throw unsupportedGet(id, 'post');
    return commentAs(ctx, 'instagram', c.objectId, id);
  },
  'POST comment/comments': (ctx, id) => {
    const c = commentOr404(ctx, id);
    if (c.platform !== 'messenger') throw unsupportedGet(id, 'post');
    return commentAs(ctx, 'messenger', c.objectId, id);
  },
};
