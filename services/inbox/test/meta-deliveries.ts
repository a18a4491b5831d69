import { randomInt } from 'node:crypto';
import { type Bus, connectBus, type DeadLetter, listDeadLetters } from '@svc/bus';
import type { ConversationView, MessageView } from '@svc/contracts/public';
import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import { createLogger } from '@svc/logging';
import { api, eventually as poll } from '@svc/testing';
import { type InboxHarness, startInbox } from './harness.ts';

/**
 * The inbox system, called by a partner whose key may make many requests: these tests read the
 * partner's view (REST) after every delivery, far beyond the default 300 a minute.
 */
export async function startBusyInbox(): Promise<InboxHarness> {
  const h = await startInbox();
  const { key } = await h.system.createPartner(undefined, { limitPerMinute: 100_000 });
  return { ...h, key, call: api(h.system.gatewayUrl, key) };
}

/** Polls `check` every 100 ms (REST reads, not a tight loop) until it answers, for up to 10 s. */
export const eventually = <T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> =>
  poll(check, timeoutMs, 100);

/** The test system's app secret (META_APP_SECRET's development value): Meta signs with it. */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';

/**
 * POSTs a webhook body to the gateway as Meta does: Meta's JSON encoding (or the text as given),
 * signed over its exact bytes. Answers the status and how long the answer took.
 */
export async function deliver(h: InboxHarness, payload: unknown): Promise<{ status: number; ms: number }> {
  const body = typeof payload === 'string' ? payload : metaJson(payload);
  const started = performance.now();
  const response = await fetch(`${h.system.gatewayUrl}/webhooks/meta`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) },
    body,
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/** A fresh page- or app-scoped id of a person, shaped like Meta's (facts §4.1). */
export const personId = (prefix: '70' | '61') => `${prefix}${randomInt(1e13, 1e14 - 1)}`;
export const uniqueMid = (label: string) => `m_${label}_${randomInt(1e9, 1e10 - 1)}`;

/** The partner's view of one thread, through REST. */
export interface Thread {
  conversation: ConversationView;
  messages: MessageView[];
}

/** The DM thread of a person with an account as REST lists it, once it exists. */
export async function dmThread(h: InboxHarness, account: string, contactId: string): Promise<Thread> {
  return eventually(async () => {
    const thread = await findThread(h, account, (c) => c.contact?.id === contactId);
    if (!thread) throw new Error(`no thread with ${contactId} yet`);
    return thread;
  });
}

/** The thread whose conversation matches, now (undefined when none does). */
export async function findThread(
  h: InboxHarness,
  account: string,
  match: (c: ConversationView) => boolean,
): Promise<Thread | undefined> {
  const list = await h.call('GET', `/v1/conversations?account=${account}&limit=200`);
  const conversation = (list.body.data as ConversationView[]).find(match);
  if (!conversation) return undefined;
  const messages = await h.call('GET', `/v1/conversations/${conversation.id}/messages?limit=200`);
  return { conversation, messages: messages.body.data as MessageView[] };
}

/** The message with this network id in a thread, once REST shows it (and `check` holds). */
export async function messageIn(
  h: InboxHarness,
  account: string,
  match: (c: ConversationView) => boolean,
  platformId: string,
  check: (m: MessageView) => boolean = () => true,
): Promise<{ thread: Thread; message: MessageView }> {
  return eventually(async () => {
    const thread = await findThread(h, account, match);
    const message = thread?.messages.find((m) => m.platform_message_id === platformId);
    if (!thread || !message || !check(message)) throw new Error(`message ${platformId} not as expected yet`);
    return { thread, message };
  });
}

/** The workspace's events of a type that name this message, as `GET /v1/events` lists them. */
/**
 * The partner-visible events of `type` about one message. Events reach the feed through the
 * outbox and the bus, after the REST view already shows the change; with `expected`, waits until
 * that many have arrived and reads once more a moment later, so a duplicate would show too.
 */
export async function eventsAbout(
  h: InboxHarness,
  workspace: string,
  type: string,
  messageId: string,
  expected = 0,
) {
  const read = async () => {
    const list = await h.call('GET', `/v1/events?workspace=${workspace}&type=${type}&limit=200`);
    const events = list.body.data as {
      id: string;
      data: { message: MessageView; conversation: ConversationView };
    }[];
    return events.filter((e) => e.data.message.id === messageId);
  };
  if (expected === 0) return read();
  await eventually(async () => ((await read()).length >= expected ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 300));
  return read();
}

/** The inbox intake's dead letters, as `pnpm dead-letters list --consumer inbox-provider-webhooks` shows them. */
export async function deadLetterReader(h: InboxHarness) {
  const bus: Bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    prefix: h.system.prefix,
    name: 'dead-letter-reader',
    logger: createLogger('dead-letter-reader', { level: 'silent' }),
  });
  return {
    bus,
    list: (): Promise<DeadLetter[]> => listDeadLetters(bus, 'inbox-provider-webhooks'),
    close: () => bus.close(),
  };
}
