import { postDryRunView, postView, publishingLimitView } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pagination, pathId, queryFlag, timestamp } from '../http/schemas.ts';
import { accountParams } from './accounts.ts';
import { type AnyOperation, answered, defineOperation } from './operation.ts';
import { format, reelJson, reelSettings, targets, targetsOf, title } from './post-formats.ts';

/** `wait=true` answers within 25 s; the gRPC deadline leaves room for the answer itself. */
const WAIT_MS = 25_000;
const waitOptions = (wait: boolean | undefined) => (wait ? { deadlineMs: WAIT_MS + 5_000 } : undefined);

const ids = (kind: 'media' | 'account', what: string) => z.array(idField(kind, what)).max(10);
const postParams = z.strictObject({ id: pathId('post', 'post') });
const postOptions = z
  .record(z.string(), z.unknown())
  .describe('stored with the post; `first_comment` is posted as the first comment once published');

const createPostBody = z.strictObject({
  workspace: idField('workspace', 'workspace'),
  caption: z.string().max(63_206).default(''),
  title: title.optional(),
  media: ids('media', 'media').default([]),
  targets,
  format,
  reel: reelSettings.optional(),
  schedule_at: timestamp.optional(),
  external_ref: z.string().min(1).max(255).optional(),
  options: postOptions.default({}),
  draft: z.boolean().default(false).describe('keep as a draft; publish with POST /v1/posts/:id/publish'),
});

const postListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  status: z.enum(['draft', 'scheduled', 'publishing', 'published', 'partial', 'failed']).optional(),
  external_ref: z.string().min(1).max(255).optional(),
  account: idField('account', 'account').optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
});

const updatePostBody = z.strictObject({
  caption: z.string().max(63_206).optional(),
  title: title.optional(),
  media: ids('media', 'media').optional(),
  targets: targets.optional(),
  format,
  reel: reelSettings.nullable().optional(),
  schedule_at: timestamp.nullable().optional(),
  external_ref: z.string().min(1).max(255).optional(),
  options: postOptions.optional(),
});

const wait = queryFlag('wait up to 25 s for the outcome');
const postTool = { idArg: 'post_id' };

/** Posts: create (or check), list, read, change, publish; and an account's publishing limit. */
export function postOperations(publishing: PublishingClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/posts',
      summary: 'Create a post: published at once, at schedule_at, or kept as a draft',
      permission: 'objects',
      query: z.strictObject({
        wait,
        dry_run: queryFlag('run every check and answer 200 with what would be sent; create nothing'),
      }),
      body: createPostBody,
      workspaceIn: 'body',
      status: 201,
      alternateStatus: [200],
      response: z.union([postView, postDryRunView]),
      widget: { url: '/v1/embed/posts', permission: 'embedPublish' },
      tools: [
        {
          name: 'create_post',
          title: 'Create a post',
          description:
            'Create a post on one or more connected accounts (targets): published at once, at schedule_at, or kept as a draft. Media are ids from create_media_from_url. Each target is published separately; the post status follows from theirs.',
          omit: ['dry_run'],
        },
        {
          name: 'dry_run_post',
          title: 'Check a post without creating it',
          description:
            'Run every check create_post runs (targets, media, captions, network rules) and answer what would be sent to each network; nothing is created or published.',
          readOnly: true,
          preset: { dry_run: true },
          omit: ['wait'],
        },
      ],
      async run({ principal, origin, query, body, idempotency }) {
        const { postJson, replayed, dryRunJson } = await publishing.createPost(
          {
            caller: grpcCaller(principal),
            workspaceId: body.workspace,
            caption: body.caption,
            mediaIds: body.media,
            ...targetsOf(body.targets),
            format: body.format ?? '',
            reelJson: body.reel ? reelJson(body.reel) : '',
            title: body.title ?? '',
            scheduleAt: body.schedule_at ?? '',
            externalRef: body.external_ref ?? '',
            optionsJson: JSON.stringify(body.options),
            draft: body.draft,
            createdBy: origin,
            waitMs: query.wait ? WAIT_MS : 0,
            idempotency,
            dryRun: query.dry_run ?? false,
          },
          waitOptions(query.wait),
        );
        if (dryRunJson) return answered(jsonText(dryRunJson), { status: 200 });
        return answered(jsonText(postJson), { replayed });
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/posts',
      summary: 'List posts, oldest first',
      permission: 'objects',
      query: postListQuery,
      workspaceIn: 'query',
      status: 200,
      response: paged(postView),
      widget: { url: '/v1/embed/posts', permission: 'embedPublish' },
      tools: [
        {
          name: 'list_posts',
          title: 'List posts',
          description:
            'List the posts of this workspace, oldest first; filter by status, account, external_ref or creation time.',
          readOnly: true,
        },
      ],
      async run({ principal, query }) {
        const { postsJson, total } = await publishing.listPosts({
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
        return pagedJsonText(postsJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/posts/:id',
      summary: 'Read a post and its targets',
      permission: 'objects',
      params: postParams,
      status: 200,
      response: postView,
      tools: [
        {
          ...postTool,
          name: 'get_post',
          title: 'Read a post',
          description: 'Read a post with its targets: per account status, permalink and error.',
          readOnly: true,
        },
      ],
      async run({ principal, params }) {
        const { postJson } = await publishing.getPost({ caller: grpcCaller(principal), postId: params.id });
        return jsonText(postJson);
      },
    }),
    defineOperation({
      method: 'PATCH',
      url: '/v1/posts/:id',
      summary: 'Change a draft, scheduled, failed or partial post (409 once published or publishing)',
      permission: 'objects',
      params: postParams,
      body: updatePostBody,
      status: 200,
      response: postView,
      tools: [
        {
          ...postTool,
          name: 'update_post',
          title: 'Change a post',
          description:
            'Change a draft, scheduled, failed or partial post (only the fields sent change; schedule_at null unschedules). A published or publishing post is a conflict.',
        },
      ],
      async run({ principal, params, body }) {
        const { postJson } = await publishing.updatePost({
          caller: grpcCaller(principal),
          postId: params.id,
          caption: body.caption,
          mediaIds: body.media ?? [],
          replaceMedia: body.media !== undefined,
          ...targetsOf(body.targets ?? []),
          replaceTargets: body.targets !== undefined,
          format: body.format,
          reelJson: body.reel === undefined ? undefined : body.reel === null ? 'null' : reelJson(body.reel),
          title: body.title,
          scheduleAt: body.schedule_at ?? undefined,
          clearSchedule: body.schedule_at === null,
          externalRef: body.external_ref,
          optionsJson: body.options === undefined ? undefined : JSON.stringify(body.options),
        });
        return jsonText(postJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/accounts/:id/publishing-limit',
      summary:
        "A photo_network account's rolling 24-hour publishing limit: limit, used, remaining, next free slot",
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: publishingLimitView,
      tools: [
        {
          name: 'get_publishing_limit',
          idArg: 'account_id',
          title: 'Publishing limit of an account',
          description:
            "A photo_network account's rolling 24-hour publishing limit: limit, used, remaining and the next free slot.",
          readOnly: true,
        },
      ],
      async run({ principal, params }) {
        const { limitJson } = await publishing.getPublishingLimit({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return jsonText(limitJson);
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/posts/:id/publish',
      summary:
        'Publish a draft or scheduled post now, or retry the failed targets of a failed or partial post',
      permission: 'objects',
      params: postParams,
      query: z.strictObject({ wait }),
      status: 200,
      response: postView,
      tools: [
        {
          ...postTool,
          name: 'publish_post',
          title: 'Publish a post now',
          description:
            'Publish a draft or scheduled post now, or retry the failed targets of a failed or partial post.',
        },
      ],
      async run({ principal, params, query, idempotency }) {
        const { postJson, replayed } = await publishing.publishPost(
          { caller: grpcCaller(principal), postId: params.id, waitMs: query.wait ? WAIT_MS : 0, idempotency },
          waitOptions(query.wait),
        );
        return answered(jsonText(postJson), { replayed });
      },
    }),
  ];
}
