import { createHash } from 'node:crypto';
import type { Post } from '@svc/contracts';
import { errors } from '@svc/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { idParam, paged, pagination, queryBoolean, timestamp } from '../http/schemas.ts';

const network = z.enum(['photo_network', 'page_network']);

const targetView = z.object({
  account: z.string(),
  network,
  username: z.string(),
  status: z.string().describe('pending or publishing while in flight, then published or failed'),
  platform_post_id: z.string().nullable(),
  permalink: z.string().nullable(),
  error: z.string().nullable().describe("the network provider's message when failed"),
  published_at: timestamp.nullable(),
  first_comment_error: z.string().nullable(),
});

const postView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    external_ref: z.string().nullable(),
    caption: z.string(),
    media: z.array(
      z.object({ id: z.string(), kind: z.string(), mime: z.string(), width: z.number(), height: z.number() }),
    ),
    targets: z.array(targetView),
    schedule_at: timestamp.nullable(),
    status: z.string().describe('draft, scheduled, publishing, published, partial or failed'),
    published_at: timestamp.nullable(),
    attempts: z.number().int(),
    last_error: z.string().nullable().describe('per network, prefixed with the network name and a colon'),
    created_by: z.string(),
    created: timestamp,
    updated: timestamp,
    options: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Post' });

/** The public post record (spec 2.3, 2.4); post events carry the same object. */
function toPostView(p: Post): z.infer<typeof postView> {
  return {
    id: p.id,
    workspace: p.workspaceId,
    external_ref: p.externalRef || null,
    caption: p.caption,
    media: p.media.map((m) => ({ id: m.id, kind: m.kind, mime: m.mime, width: m.width, height: m.height })),
    targets: p.targets.map((t) => ({
      account: t.accountId,
      network: t.network as z.infer<typeof network>,
      username: t.username,
      status: t.status,
      platform_post_id: t.platformPostId || null,
      permalink: t.permalink || null,
      error: t.error ?? null,
      published_at: t.publishedAt || null,
      first_comment_error: t.firstCommentError ?? null,
    })),
    schedule_at: p.scheduleAt || null,
    status: p.status,
    published_at: p.publishedAt || null,
    attempts: p.attempts,
    last_error: p.lastError ?? null,
    created_by: p.createdBy,
    created: p.createdAt,
    updated: p.updatedAt,
    options: JSON.parse(p.optionsJson || '{}') as Record<string, unknown>,
  };
}

const dryRunView = z
  .object({
    dry_run: z.literal(true),
    workspace: z.string(),
    status: z.string().describe('the status the post would get'),
    schedule_at: timestamp.nullable(),
    targets: z.array(
      z.object({
        account: z.string(),
        network,
        username: z.string(),
        would_send: z.object({
          kind: z.enum(['image', 'carousel', 'text', 'photo', 'multi_photo']),
          caption: z.string(),
          media: z.array(z.string()),
          converted_to_jpeg: z.array(z.string()).describe('media converted to JPEG for the photo network'),
        }),
      }),
    ),
  })
  .meta({ id: 'PostDryRun' });

/** `wait=true` answers within 25 s; the gRPC deadline leaves room for the answer itself. */
const WAIT_MS = 25_000;
const waitOptions = (wait: boolean | undefined) => (wait ? { deadlineMs: WAIT_MS + 5_000 } : undefined);

const ids = (kind: 'media' | 'account', what: string) => z.array(idParam(kind, what)).max(10);
const postParams = z.strictObject({ id: idParam('post', 'post') });
const postOptions = z
  .record(z.string(), z.unknown())
  .describe('stored with the post; `first_comment` is posted as the first comment once published');

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The client's `Idempotency-Key` with a hash of what it asked (method, path, query, body), so
 * the same key with another request is told apart (409) from a retry (the same post again).
 */
function idempotencyOf(request: FastifyRequest) {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
    throw errors.validation('Idempotency-Key', 'Idempotency-Key must be 1-255 printable ASCII characters');
  const requestHash = createHash('sha256')
    .update(JSON.stringify([request.method, request.url, request.body ?? null]))
    .digest('hex');
  return { key, requestHash };
}

function markReplay(reply: FastifyReply, replayed: boolean): void {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
}

export function postRoutes(publishing: PublishingClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/posts',
      summary: 'Create a post: published at once, at schedule_at, or kept as a draft',
      permission: 'objects',
      query: z.strictObject({
        wait: queryBoolean.describe('wait up to 25 s for the outcome'),
        dry_run: queryBoolean.describe(
          'run every check and answer 200 with what would be sent; create nothing',
        ),
      }),
      body: z.strictObject({
        workspace: idParam('workspace', 'workspace'),
        caption: z.string().max(63_206).default(''),
        media: ids('media', 'media').default([]),
        targets: ids('account', 'account').min(1),
        schedule_at: timestamp.optional(),
        external_ref: z.string().min(1).max(255).optional(),
        options: postOptions.default({}),
        draft: z
          .boolean()
          .default(false)
          .describe('keep as a draft; publish with POST /v1/posts/:id/publish'),
      }),
      status: 201,
      alternateStatus: [200],
      response: z.union([postView, dryRunView]),
      async handler({ principal, query, body, request, reply }) {
        const { post, replayed, dryRunJson } = await publishing.createPost(
          {
            caller: grpcCaller(principal),
            workspaceId: body.workspace,
            caption: body.caption,
            mediaIds: body.media,
            accountIds: body.targets,
            scheduleAt: body.schedule_at ?? '',
            externalRef: body.external_ref ?? '',
            optionsJson: JSON.stringify(body.options),
            draft: body.draft,
            createdBy: 'api',
            waitMs: query.wait ? WAIT_MS : 0,
            idempotency: idempotencyOf(request),
            dryRun: query.dry_run ?? false,
          },
          waitOptions(query.wait),
        );
        if (dryRunJson) return reply.code(200).send(JSON.parse(dryRunJson));
        markReplay(reply, replayed);
        return toPostView(post as Post);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/posts',
      summary: 'List posts, oldest first',
      permission: 'objects',
      query: z.strictObject({
        ...pagination,
        workspace: idParam('workspace', 'workspace').optional(),
        status: z.enum(['draft', 'scheduled', 'publishing', 'published', 'partial', 'failed']).optional(),
        external_ref: z.string().min(1).max(255).optional(),
        account: idParam('account', 'account').optional(),
        created_after: timestamp.optional(),
        created_before: timestamp.optional(),
      }),
      status: 200,
      response: paged(postView),
      async handler({ principal, query }) {
        const { posts, total } = await publishing.listPosts({
          caller: grpcCaller(principal),
          workspaceId: query.workspace ?? '',
          status: query.status ?? '',
          externalRef: query.external_ref ?? '',
          accountId: query.account ?? '',
          createdAfter: query.created_after ?? '',
          createdBefore: query.created_before ?? '',
          page: query.page,
          limit: query.limit,
        });
        return { data: posts.map(toPostView), page: query.page, limit: query.limit, total };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/posts/:id',
      summary: 'Read a post and its targets',
      permission: 'objects',
      params: postParams,
      status: 200,
      response: postView,
      async handler({ principal, params }) {
        const { post } = await publishing.getPost({ caller: grpcCaller(principal), postId: params.id });
        return toPostView(post as Post);
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/posts/:id',
      summary: 'Change a draft, scheduled, failed or partial post (409 once published or publishing)',
      permission: 'objects',
      params: postParams,
      body: z.strictObject({
        caption: z.string().max(63_206).optional(),
        media: ids('media', 'media').optional(),
        targets: ids('account', 'account').min(1).optional(),
        schedule_at: timestamp.nullable().optional(),
        external_ref: z.string().min(1).max(255).optional(),
        options: postOptions.optional(),
      }),
      status: 200,
      response: postView,
      async handler({ principal, params, body }) {
        const { post } = await publishing.updatePost({
          caller: grpcCaller(principal),
          postId: params.id,
          caption: body.caption,
          mediaIds: body.media ?? [],
          replaceMedia: body.media !== undefined,
          accountIds: body.targets ?? [],
          replaceTargets: body.targets !== undefined,
          scheduleAt: body.schedule_at ?? undefined,
          clearSchedule: body.schedule_at === null,
          externalRef: body.external_ref,
          optionsJson: body.options === undefined ? undefined : JSON.stringify(body.options),
        });
        return toPostView(post as Post);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/accounts/:id/publishing-limit',
      summary:
        "A photo_network account's rolling 24-hour publishing limit: limit, used, remaining, next free slot",
      permission: 'objects',
      params: z.strictObject({ id: idParam('account', 'account') }),
      status: 200,
      response: z
        .object({
          limit: z.number().int(),
          used: z.number().int(),
          remaining: z.number().int(),
          window_hours: z.number().int(),
          next_slot_at: timestamp.nullable().describe('when a slot frees up; null while one is free'),
        })
        .meta({ id: 'PublishingLimit' }),
      async handler({ principal, params }) {
        const limit = await publishing.getPublishingLimit({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return {
          limit: limit.limit,
          used: limit.used,
          remaining: limit.remaining,
          window_hours: limit.windowHours,
          next_slot_at: limit.nextSlotAt || null,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/posts/:id/publish',
      summary:
        'Publish a draft or scheduled post now, or retry the failed targets of a failed or partial post',
      permission: 'objects',
      params: postParams,
      query: z.strictObject({ wait: queryBoolean.describe('wait up to 25 s for the outcome') }),
      status: 200,
      response: postView,
      async handler({ principal, params, query, request, reply }) {
        const { post, replayed } = await publishing.publishPost(
          {
            caller: grpcCaller(principal),
            postId: params.id,
            waitMs: query.wait ? WAIT_MS : 0,
            idempotency: idempotencyOf(request),
          },
          waitOptions(query.wait),
        );
        markReplay(reply, replayed);
        return toPostView(post as Post);
      },
    }),
  ];
}
