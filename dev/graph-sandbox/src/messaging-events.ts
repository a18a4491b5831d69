import { z } from '@svc/config';
import type { FastifyInstance } from 'fastify';
import { ControlError, need, parseBody } from './control-errors.ts';
import { messagingBody, messagingItem } from './event-payloads.ts';
import type { Platform } from './store.ts';
import { addMessage, conversationFor } from './threads.ts';
import type { World } from './world.ts';

/**
 * Control routes that send the messaging webhooks that are not a person's message: postbacks,
 * standby, handover of the thread between apps, and referrals.
 */
const HANDOVER = ['pass_thread_control', 'take_thread_control', 'request_thread_control'] as const;
const messagingEventBody = z.object({
  kind: z.enum(['postback', 'standby', 'referral', ...HANDOVER]),
  person_id: z.string().min(1),
  text: z.string().min(1).default('hello'),
  title: z.string().min(1).default('Get Started'),
  payload: z.string().min(1).default('GET_STARTED'),
});

/** Postbacks, standby, handover and referrals of a person of the account. */
async function sendMessagingEvent(world: World, platform: Platform, accountId: string, input: unknown) {
  const body = parseBody(messagingEventBody, input);
  const person = world.store.participants.get(body.person_id);
  if (!person || person.accountId !== accountId) throw new ControlError(404, 'person not found');
  const appId = world.config.appId;
  const other = '263902037430900';
  const send = (key: string, value: unknown, list: 'messaging' | 'standby' = 'messaging') => {
    const item = messagingItem(world, person.id, accountId, key, value);
    return world.webhooks.sendEvent(messagingBody(world, platform, accountId, item, list));
  };
  switch (body.kind) {
    case 'postback':
      return send('postback', { mid: midFor(world, platform), title: body.title, payload: body.payload });
    case 'standby': {
      // A message all the same: the thread has it, only another app is told first.
      const message = addMessage(world, conversationFor(world, person), { text: body.text }, true);
      return send('message', { mid: message.id, text: body.text }, 'standby');
    }
    case 'referral':
      return send('referral', { ref: body.payload, source: 'SHORTLINK', type: 'OPEN_THREAD' });
    case 'pass_thread_control':
      return send(body.kind, { new_owner_app_id: other, previous_owner_app_id: appId, metadata: '' });
    case 'take_thread_control':
      return send(body.kind, { previous_owner_app_id: other, new_owner_app_id: appId, metadata: '' });
    case 'request_thread_control':
      return send(body.kind, { requested_owner_app_id: Number(other), metadata: '' });
  }
}

const midFor = (world: World, platform: Platform) =>
  platform === 'instagram' ? world.ids.igMessage() : world.ids.messengerMessage();

export function registerMessagingEvents(app: FastifyInstance, world: World): void {
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/messaging-events', async (req) => {
    need(world.store.igAccounts.get(req.params.id), 'instagram account');
    return { webhook: await sendMessagingEvent(world, 'instagram', req.params.id, req.body) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/messaging-events', async (req) => {
    need(world.store.pages.get(req.params.id), 'page');
    return { webhook: await sendMessagingEvent(world, 'messenger', req.params.id, req.body) };
  });
}
