import { z } from '@svc/config';
import type { FastifyInstance } from 'fastify';
import { editBody, personBody } from './control-bodies.ts';
import { ControlError, need, parseBody } from './control-errors.ts';
import { commentChangeValue, feedBody, postReactionValue, statusValue } from './event-payloads.ts';
import type { PagePost } from './store.ts';
import type { World } from './world.ts';

/**
 * Control routes that send the Page feed webhooks other than a new comment: Page comments edited,
 * removed, hidden or shown (Instagram sends no webhook for these), a reaction to a Page post, and
 * a status posted on the Page.
 */
const postReactionBody = z.object({ from: personBody, reaction_type: z.string().min(1).default('like') });
const statusBody = z.object({ message: z.string().min(1) });

export function registerFeedChanges(app: FastifyInstance, world: World): void {
  const pageComment = (id: string) => {
    const comment = need(world.store.comments.get(id), 'comment');
    if (comment.platform === 'instagram')
      throw new ControlError(400, 'Instagram sends no webhook when a comment is edited, removed or hidden');
    return comment;
  };
  const sendChange = (id: string, verb: string, change: (c: ReturnType<typeof pageComment>) => void) => {
    const comment = pageComment(id);
    change(comment);
    const value = commentChangeValue(world, comment, verb);
    return world.webhooks.sendEvent(feedBody(world, comment.accountId, value));
  };
  app.post<{ Params: { id: string } }>('/__sandbox/comments/:id/edit', async (req) => {
    const { text } = parseBody(editBody, req.body);
    return { webhook: await sendChange(req.params.id, 'edited', (c) => Object.assign(c, { text })) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/comments/:id/remove', async (req) => ({
    webhook: await sendChange(req.params.id, 'remove', (c) => world.store.comments.delete(c.id)),
  }));
  for (const verb of ['hide', 'unhide'] as const)
    app.post<{ Params: { id: string } }>(`/__sandbox/comments/:id/${verb}`, async (req) => ({
      webhook: await sendChange(req.params.id, verb, (c) => Object.assign(c, { hidden: verb === 'hide' })),
    }));
  app.post<{ Params: { id: string } }>('/__sandbox/pages/posts/:id/reactions', async (req) => {
    const post = need(world.store.pagePosts.get(req.params.id), 'page post');
    const body = parseBody(postReactionBody, req.body);
    const from = { id: body.from.id ?? world.ids.digits('77', 16), name: body.from.name ?? 'A Visitor' };
    const value = postReactionValue(world, post, from, body.reaction_type);
    return { webhook: await world.webhooks.sendEvent(feedBody(world, post.pageId, value)) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/status', async (req, reply) => {
    const page = need(world.store.pages.get(req.params.id), 'page');
    const { message } = parseBody(statusBody, req.body);
    const post: PagePost = {
      id: `${page.id}_${world.ids.pagePostPart()}`,
      pageId: page.id,
      message,
      link: null,
      photoIds: [],
      createdAt: world.clock.now(),
    };
    world.store.pagePosts.set(post.id, post);
    const value = statusValue(post, page.name);
    return reply.code(201).send({
      id: post.id,
      webhook: await world.webhooks.sendEvent(feedBody(world, page.id, value)),
    });
  });
}
