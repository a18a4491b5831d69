import { postDryRunView, postView, publishingLimitView } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller, originOf, type Principal } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { type IdempotencyClaim, markReplay } from '../http/idempotency.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { idField, paged, pagination, pathId, queryBoolean, timestamp } from '../http/schemas.ts';
import { accountParams } from './accounts.ts';

/** `wait=true` answers within 25 s; the gRPC deadline leaves room for the answer itself. */
const WAIT_MS = 25_000;
const waitOptions = (wait: boolean | undefined) => (wait ? { deadlineMs: WAIT_MS + 5_000 } : undefined);

const ids = (kind: 'media' | 'account', what: string) => z.array(idField(kind, what)).max(10);
export const postParams = z.strictObject({ id: pathId('post', 'post') });
const postOptions = z
  .record(z.string(), z.unknown())
  .describe('stored with the post; `first_comment` is posted as the first comment once published');

/** The request schemas of the post routes, shared with the MCP tools that mirror them. */
export const createPostBody = z.strictObject({
  workspace: idField('workspace', 'workspace'),
  caption: z.string().max(63_206).default(''),
  media: ids('media', 'media').default([]),
  targets: ids('account', 'account').min(1),
  schedule_at: timestamp.optional(),
  external_ref: z.string().min(1).max(255).optional(),
  options: postOptions.default({}),
  draft: z.boolean().default(false).describe('keep as a draft; publish with POST /v1/posts/:id/publish'),
});

export const postListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  status: z.enum(['draft', 'scheduled', 'publishing', 'published', 'partial', 'failed']).optional(),
  external_ref: z.string().min(1).max(255).optional(),
  account: idField('account', 'account').optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
});

export const updatePostBody = z.strictObject({
  caption: z.string().max(63_206).optional(),
  media: ids('media', 'media').optional(),
  targets: ids('account', 'account').min(1).optional(),
  schedule_at: timestamp.nullable().optional(),
  external_ref: z.string().min(1).max(255).optional(),
  options: postOptions.optional(),
});

/** Who asked for a post (`created_by`): the REST API or the MCP endpoint. */
type CreatedBy = 'api' | 'widget' | 'mcp';

interface CreateOptions {
  wait?: boolean;
  dryRun?: boolean;
  createdBy: CreatedBy;
  idempotency: IdempotencyClaim | undefined;
}

/** The publishing calls behind REST and MCP, so both create, read and publish posts the same way. */
export function postCalls(publishing: PublishingClient) {
  return {
    create: (principal: Principal, body: z.infer<typeof createPostBody>, options: CreateOptions) =>
      publishing.createPost(
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
          createdBy: options.createdBy,
          waitMs: options.wait ? WAIT_MS : 0,
          idempotency: options.idempotency,
          dryRun: options.dryRun ?? false,
        },
        waitOptions(options.wait),
      ),
    list: (principal: Principal, query: z.infer<typeof postListQuery>) =>
      publishing.listPosts({
        caller: grpcCaller(principal),
        workspaceId: query.workspace ?? '',
        status: query.status ?? '',
        externalRef: query.external_ref ?? '',
        accountId: query.account ?? '',
        createdAfter: query.created_after ?? '',
        createdBefore: query.created_before ?? '',
        page: query.page,
        limit: query.limit,
      }),
    get: (principal: Principal, postId: string) =>
      publishing.getPost({ caller: grpcCaller(principal), postId }),
    update: (principal: Principal, postId: string, body: z.infer<typeof updatePostBody>) =>
      publishing.updatePost({
        caller: grpcCaller(principal),
        postId,
        caption: body.caption,
        mediaIds: body.media ?? [],
        replaceMedia: body.media !== undefined,
        accountIds: body.targets ?? [],
        replaceTargets: body.targets !== undefined,
        scheduleAt: body.schedule_at ?? undefined,
        clearSchedule: body.schedule_at === null,
        externalRef: body.external_ref,
        optionsJson: body.options === undefined ? undefined : JSON.stringify(body.options),
      }),
    publish: (
      principal: Principal,
      postId: string,
      wait: boolean | undefined,
      idempotency: IdempotencyClaim | undefined,
    ) =>
      publishing.publishPost(
        { caller: grpcCaller(principal), postId, waitMs: wait ? WAIT_MS : 0, idempotency },
        waitOptions(wait),
      ),
    publishingLimit: (principal: Principal, accountId: string) =>
      publishing.getPublishingLimit({ caller: grpcCaller(principal), accountId }),
  };
}

export function postRoutes(publishing: PublishingClient): AnyRoute[] {
  const calls = postCalls(publishing);
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
      body: createPostBody,
      status: 201,
      alternateStatus: [200],
      response: z.union([postView, postDryRunView]),
      async handler({ principal, query, body, reply, idempotency }) {
        const { postJson, replayed, dryRunJson } = await calls.create(principal, body, {
          wait: query.wait,
          dryRun: query.dry_run,
          createdBy: originOf(principal),
          idempotency,
        });
        if (dryRunJson) {
          reply.code(200);
          return jsonText(dryRunJson);
        }
        markReplay(reply, replayed);
        return jsonText(postJson);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/posts',
      summary: 'List posts, oldest first',
      permission: 'objects',
      query: postListQuery,
      status: 200,
      response: paged(postView),
      async handler({ principal, query }) {
        const { postsJson, total } = await calls.list(principal, query);
        return pagedJsonText(postsJson, query.page, query.limit, total);
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
        return jsonText((await calls.get(principal, params.id)).postJson);
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/posts/:id',
      summary: 'Change a draft, scheduled, failed or partial post (409 once published or publishing)',
      permission: 'objects',
      params: postParams,
      body: updatePostBody,
      status: 200,
      response: postView,
      async handler({ principal, params, body }) {
        return jsonText((await calls.update(principal, params.id, body)).postJson);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/accounts/:id/publishing-limit',
      summary:
        "A photo_network account's rolling 24-hour publishing limit: limit, used, remaining, next free slot",
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: publishingLimitView,
      async handler({ principal, params }) {
        return jsonText((await calls.publishingLimit(principal, params.id)).limitJson);
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
      async handler({ principal, params, query, reply, idempotency }) {
        const { postJson, replayed } = await calls.publish(principal, params.id, query.wait, idempotency);
        markReplay(reply, replayed);
        return jsonText(postJson);
      },
    }),
  ];
}
