import { type Bus, connectBus, makeEvent } from '@svc/bus';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { api, connectThroughLink, createUser, eventually, newLink, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELETION_GRACE_MS, purgeDeletedWorkspaces } from '../src/deleted-workspaces.ts';

/**
 * A deleted workspace in the event store, seen as the partner sees it (`GET /v1/events`, webhook
 * deliveries): its events leave at once, message text included, except the `account.disconnected`
 * events announcing the deletion, which are still delivered and listed for a grace period.
 */
let stack: Stack;
let call: ReturnType<typeof api>;
let receiver: Receiver;
let db: pg.Pool;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  // Polled often while waiting: above the default 300 requests a minute.
  const partner = await stack.system.createPartner(undefined, { limitPerMinute: 100_000 });
  call = api(stack.gateway.url, partner.key);
  receiver = await Receiver.start();
  expect((await call('PUT', '/v1/webhook', { url: receiver.url })).status).toBe(200);
  db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: '-c search_path=webhooks' });
  const logger = createLogger('deletion-test', { level: 'silent' });
  bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    prefix: stack.prefix,
    name: 'deletion-test',
    logger,
  });
});
afterAll(async () => {
  await bus?.close();
  await db?.end();
  await receiver?.close();
  await stack?.stop();
});

interface Listed {
  id: string;
  type: string;
  partner: string;
  data: { reason?: string; message?: { text: string | null } };
}

async function connectedWorkspace(name: string) {
  const user = await createUser(stack, [{ name: `${name} Page`, instagram: { username: `${name}_ig` } }]);
  const { url, workspaceId } = await newLink(call);
  await connectThroughLink(stack, url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.data as {
    network: string;
    platform_id: string;
  }[];
  const ig = accounts.find((a) => a.network === 'photo_network');
  if (!ig) throw new Error('not connected');
  return { workspaceId, ig };
}

const listed = async (workspace: string): Promise<Listed[]> =>
  (await call('GET', `/v1/events?workspace=${workspace}&limit=200`)).body.data as Listed[];

/** A DM to the account, once the partner can list its message.received. */
async function dm(workspace: string, igId: string, text: string): Promise<Listed> {
  await stack.sandboxControl('POST', `/__sandbox/instagram/${igId}/messages`, {
    from: { username: 'customer', name: 'A Customer' },
    text,
  });
  return eventually(async () => (await listed(workspace)).find((e) => e.data.message?.text === text));
}

const deliveriesOf = (type: string, workspace: string) =>
  receiver.requests.filter(
    (r) =>
      r.headers['x-service-event'] === type &&
      (JSON.parse(r.body) as { workspace: string }).workspace === workspace,
  );

/** Stored rows whose body holds this text, in the event store's own tables. */
async function storedWith(text: string): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM events WHERE body LIKE $1', [`%${text}%`]);
  return rows[0].n;
}

describe('deleting a workspace', () => {
  // Guarantee: once a workspace is deleted, GET /v1/events?workspace= lists only the
  // account.disconnected events announcing it (reason workspace_deleted), which are delivered by
  // webhook; the message text is gone from the event store and a delivery still waiting for a
  // retry is never made; an event of the workspace arriving late is not stored; once the grace
  // period is over (and the deliveries settled), nothing of the workspace is listed.
  it('purges its events and keeps the deletion announced', async () => {
    const { workspaceId, ig } = await connectedWorkspace('leaving');
    const text = 'call me on 555-0100 about order 42';
    // The partner's endpoint refuses message events: the DM's delivery waits for its retry.
    receiver.behaviour = (request, response) =>
      response.writeHead(request.headers['x-service-event'] === 'message.received' ? 500 : 200).end();
    await dm(workspaceId, ig.platform_id, text);
    await eventually(() => deliveriesOf('message.received', workspaceId).length > 0 || undefined);
    expect(await storedWith('555-0100')).toBe(1);

    expect((await call('DELETE', `/v1/workspaces/${workspaceId}`)).status).toBe(204);
    const remaining = await eventually(async () => {
      const events = await listed(workspaceId);
      const done = events.length === 2 && events.every((e) => e.type === 'account.disconnected');
      return done ? events : undefined;
    });
    expect(remaining.map((e) => e.data.reason)).toEqual(['workspace_deleted', 'workspace_deleted']);
    expect(await storedWith('555-0100')).toBe(0);
    await eventually(() => deliveriesOf('account.disconnected', workspaceId).length === 2 || undefined);
    // The receiver has the deliveries a moment before the service records their answers.
    const pending = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM deliveries d JOIN events e ON e.id = d.event_id
            WHERE e.workspace_id = $1 AND d.state = 'pending'`,
          [workspaceId],
        )
      ).rows[0].n as number;
    expect(await eventually(async () => ((await pending()) === 0 ? 0 : undefined))).toBe(0);

    // A late event of the workspace (a relay that was behind), then one of another workspace.
    const partner = remaining[0]?.partner ?? '';
    const late = makeEvent(
      'message.received',
      { partner, workspace: workspaceId, external_id: null },
      {
        message: { text: 'late 555-0100' },
      },
    );
    const elsewhere = newId('workspace');
    const marker = makeEvent(
      'post.published',
      { partner, workspace: elsewhere, external_id: null },
      {
        post: { id: 'post_marker' },
      },
    );
    for (const event of [late, marker])
      await bus.js.publish(bus.subjects.subject(event.type), JSON.stringify(event), { msgID: event.id });
    await eventually(async () => ((await listed(elsewhere)).length === 1 ? true : undefined));
    expect((await listed(workspaceId)).map((e) => e.id)).not.toContain(late.id);
    expect(await storedWith('555-0100')).toBe(0);

    // The periodic pass keeps the announcements within the grace period and drops them after.
    expect(await purgeDeletedWorkspaces(db, new Date())).toBe(0);
    expect(await listed(workspaceId)).toHaveLength(2);
    const later = new Date(Date.now() + DELETION_GRACE_MS + 60_000);
    expect(await purgeDeletedWorkspaces(db, later)).toBe(2);
    expect(await call('GET', `/v1/events?workspace=${workspaceId}`)).toMatchObject({
      body: { data: [], total: 0 },
    });
    receiver.behaviour = (_request, response) => response.writeHead(200).end('ok');
  });

  // Guarantee: an attempt in flight when its workspace's events are purged finishes without
  // failing the recording of other attempts (no "could not be recorded" error), and its event
  // stays gone.
  it('purges an event whose delivery is in flight', async () => {
    const { workspaceId, ig } = await connectedWorkspace('inflight');
    const held: (() => void)[] = [];
    receiver.behaviour = (request, response) => {
      if (request.headers['x-service-event'] === 'message.received')
        held.push(() => response.writeHead(200).end());
      else response.writeHead(200).end();
    };
    const text = 'in flight 555-0199';
    await stack.sandboxControl('POST', `/__sandbox/instagram/${ig.platform_id}/messages`, {
      from: { username: 'flyer' },
      text,
    });
    await eventually(() => held.length > 0 || undefined);
    expect((await call('DELETE', `/v1/workspaces/${workspaceId}`)).status).toBe(204);
    await eventually(async () => ((await storedWith('555-0199')) === 0 ? true : undefined));
    for (const release of held) release();
    await eventually(() => deliveriesOf('account.disconnected', workspaceId).length === 2 || undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.logs.filter((line) => line.msg === 'delivery attempt could not be recorded')).toEqual([]);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM delivery_attempts a JOIN events e ON e.id = a.event_id WHERE e.workspace_id = $1 AND e.type = 'message.received'`,
      [workspaceId],
    );
    expect(rows[0].n).toBe(0);
    receiver.behaviour = (_request, response) => response.writeHead(200).end('ok');
  });
});
