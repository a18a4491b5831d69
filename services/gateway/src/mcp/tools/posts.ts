import { postDryRunView, postView } from '@svc/contracts/public';
import { z } from 'zod';
import type { ServiceClients } from '../../clients.ts';
import { claimOf, idempotencyKeyHeader } from '../../http/idempotency.ts';
import { jsonText, pagedJsonText } from '../../http/json-text.ts';
import { paged } from '../../http/schemas.ts';
import { createPostBody, postCalls, postListQuery, postParams, updatePostBody } from '../../routes/posts.ts';
import type { McpCaller } from '../auth.ts';
import { type AnyTool, defineTool } from '../tool.ts';

const post = { arg: 'post_id', params: postParams };
const wait = z.boolean().optional().describe('wait up to 25 s for the outcome (it may still say publishing)');

/** `Idempotency-Key` of REST, as an argument: the same key and arguments give the first answer again. */
export const idempotencyKey = idempotencyKeyHeader
  .optional()
  .describe(
    'makes retrying safe: the same key and arguments within 24 h answer the first result instead of doing it twice; the same key with other arguments is a conflict',
  );

/** The workspace is the request's (its key, or X-Service-Workspace): never an argument. */
const postArgs = createPostBody.omit({ workspace: true });

/** The claim the owning service keeps for a retried write, as REST's `Idempotency-Key` makes it. */
export function claim(caller: McpCaller, tool: string, key: string | undefined, asked: unknown) {
  return key === undefined ? undefined : claimOf(caller.scoped, `mcp:${tool}`, key, asked);
}

/** Posts of the request's workspace: create (or check), read, list, change, publish. */
export function postTools(clients: ServiceClients): AnyTool[] {
  const posts = postCalls(clients.publishing);
  return [
    defineTool({
      name: 'create_post',
      title: 'Create a post',
      description:
        'Create a post on one or more connected accounts (targets): published at once, at schedule_at, or kept as a draft. Media are ids from create_media_from_url. Each target is published separately; the post status follows from theirs.',
      input: postArgs.extend({ wait, idempotency_key: idempotencyKey }),
      output: postView,
      async run({ caller, args }) {
        const { wait: waitFor, idempotency_key: key, ...body } = args;
        const { postJson } = await posts.create(
          caller.scoped,
          { ...body, workspace: caller.workspaceId },
          { wait: waitFor, createdBy: 'mcp', idempotency: claim(caller, 'create_post', key, body) },
        );
        return jsonText(postJson);
      },
    }),
    defineTool({
      name: 'dry_run_post',
      title: 'Check a post without creating it',
      description:
        'Run every check create_post runs (targets, media, captions, network rules) and answer what would be sent to each network; nothing is created or published.',
      input: postArgs,
      output: postDryRunView,
      readOnly: true,
      async run({ caller, args }) {
        const { dryRunJson } = await posts.create(
          caller.scoped,
          { ...args, workspace: caller.workspaceId },
          { dryRun: true, createdBy: 'mcp', idempotency: undefined },
        );
        return jsonText(dryRunJson);
      },
    }),
    defineTool({
      name: 'get_post',
      title: 'Read a post',
      description: 'Read a post with its targets: per account status, permalink and error.',
      id: post,
      input: z.strictObject({}),
      output: postView,
      readOnly: true,
      run: async ({ caller, id }) => jsonText((await posts.get(caller.scoped, id)).postJson),
    }),
    defineTool({
      name: 'list_posts',
      title: 'List posts',
      description:
        'List the posts of this workspace, oldest first; filter by status, account, external_ref or creation time.',
      input: postListQuery.omit({ workspace: true }),
      output: paged(postView),
      readOnly: true,
      async run({ caller, args }) {
        const { postsJson, total } = await posts.list(caller.scoped, {
          ...args,
          workspace: caller.workspaceId,
        });
        return pagedJsonText(postsJson, args.page, args.limit, total);
      },
    }),
    defineTool({
      name: 'update_post',
      title: 'Change a post',
      description:
        'Change a draft, scheduled, failed or partial post (only the fields sent change; schedule_at null unschedules). A published or publishing post is a conflict.',
      id: post,
      input: updatePostBody,
      output: postView,
      run: async ({ caller, id, args }) => jsonText((await posts.update(caller.scoped, id, args)).postJson),
    }),
    defineTool({
      name: 'publish_post',
      title: 'Publish a post now',
      description:
        'Publish a draft or scheduled post now, or retry the failed targets of a failed or partial post.',
      id: post,
      input: z.strictObject({ wait, idempotency_key: idempotencyKey }),
      output: postView,
      async run({ caller, id, args }) {
        const idempotency = claim(caller, 'publish_post', args.idempotency_key, { id, wait: args.wait });
        return jsonText((await posts.publish(caller.scoped, id, args.wait, idempotency)).postJson);
      },
    }),
  ];
}
