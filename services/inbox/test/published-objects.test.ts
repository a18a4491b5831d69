import type { ConversationView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Connected,
  connectedWorkspace,
  dataOf,
  type InboxHarness,
  sandboxUser,
  startInbox,
} from './harness.ts';

/**
 * A comment thread names our post (`object.post`) only when its own account published the
 * object: the network's object id alone says nothing about whose post it is.
 */
let h: InboxHarness;

beforeAll(async () => {
  h = await startInbox();
});
afterAll(() => h.stop());

/** A text post on the workspace's Page; answers our post id and the network's object id. */
async function publish(w: Connected, caption: string): Promise<{ post: string; object: string }> {
  const post = await h.call('POST', '/v1/posts?wait=true', {
    workspace: w.workspace,
    caption,
    targets: [w.page.id],
  });
  expect(post.body.status).toBe('published');
  const object = post.body.targets[0].platform_post_id as string;
  // The post event reaches inbox through the bus: the link is recorded before the comment comes.
  await eventually(async () => {
    const { rows } = await h.system
      .service('inbox')
      .pool.query('SELECT 1 FROM published_objects WHERE platform_id = $1 AND post_id = $2', [
        object,
        post.body.id,
      ]);
    return rows.length === 1 ? true : undefined;
  });
  return { post: post.body.id as string, object };
}

/** A comment on the object; answers the comment thread of each workspace, as its event showed it. */
async function commentOn(object: string, a: Connected, b: Connected) {
  const comment = await h.system.sandboxControl<{ id: string }>(
    'POST',
    `/__sandbox/pages/posts/${object}/comments`,
    {
      from: { name: 'Curious' },
      text: `About ${object}?`,
    },
  );
  const threadOf = async (w: Connected) => {
    const event = await eventually(() =>
      h.recorder
        .ofType('comment.received')
        .find((e) => e.workspace === w.workspace && dataOf(e).message.platform_message_id === comment.id),
    );
    const read = await h.call('GET', `/v1/conversations/${dataOf(event).conversation.id}`);
    expect(read.body.object).toEqual(dataOf(event).conversation.object);
    return read.body as ConversationView;
  };
  return { a: await threadOf(a), b: await threadOf(b) };
}

describe('published objects', () => {
  // Guarantee: the same Page connected in two workspaces, each publishing on it: each workspace's
  // comment thread on an object names that workspace's post, or null, never the other's.
  it("never names another workspace's post", async () => {
    const user = await sandboxUser(h, 'Shared');
    const a = await connectedWorkspace(h, 'Shared A', user);
    const b = await connectedWorkspace(h, 'Shared B', user);
    expect(b.page.platform_id).toBe(a.page.platform_id);
    const ofA = await publish(a, 'From workspace A');
    const ofB = await publish(b, 'From workspace B');

    const onA = await commentOn(ofA.object, a, b);
    expect(onA.a.object).toMatchObject({ id: ofA.object, post: ofA.post });
    expect(onA.b.object).toMatchObject({ id: ofA.object, post: null });

    const onB = await commentOn(ofB.object, a, b);
    expect(onB.a.object).toMatchObject({ id: ofB.object, post: null });
    expect(onB.b.object).toMatchObject({ id: ofB.object, post: ofB.post });
  });
});
