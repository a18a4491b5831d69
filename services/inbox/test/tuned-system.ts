import type { MessageView } from '@svc/contracts/public';
import { api, recordEvents } from '@svc/testing';
import { FAST_GRAPH_RETRIES } from '@svc/testing/stack';
import { type RunMode, startSystem } from '@svc/testing/system';
import type { InboxEventData, InboxHarness } from './harness.ts';

/**
 * The whole system as harness.ts starts it, with the inbox tuned for a test (a reconciliation
 * every second or two, a short settle delay, a short Graph timeout) and optionally run as a child
 * process (its real entry point, so a test can kill it with -9). Its clock is the real one: the
 * harness's helpers that move a clock are not for these systems.
 */
export async function startTunedInbox(options: {
  inboxEnv: Record<string, string>;
  run?: RunMode;
}): Promise<InboxHarness> {
  const system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
    run: { inbox: options.run ?? 'in-process' },
    env: { UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000', GRAPH_API_RETRY_BASE_MS: '10' },
    serviceEnv: { accounts: FAST_GRAPH_RETRIES, inbox: { ...FAST_GRAPH_RETRIES, ...options.inboxEnv } },
  });
  // The tests poll the partner's view (GET /v1/events) until an event is there: not the 300 a minute.
  const { key } = await system.createPartner(undefined, { limitPerMinute: 100_000 });
  const call = api(system.gatewayUrl, key);
  const recorder = await recordEvents(system.prefix);
  const clock = {
    now: () => new Date(),
    advance: () => Promise.reject(new Error('a tuned system runs on the real clock')),
  };
  return {
    system,
    clock: clock as unknown as InboxHarness['clock'],
    call,
    key,
    recorder,
    async stop() {
      await recorder.close();
      await system.stop();
    },
  };
}

type Event = { id: string; type: string; workspace: string | null; data: InboxEventData };

const PAGE = 200;

/**
 * The partner's view of its events: `GET /v1/events` of one workspace and type, all pages. A
 * short page is the last: the pages are read one after another, so a later page's total may count
 * events stored after the earlier pages were read, and waiting for the pages to add up to it
 * could ask for empty pages for good.
 */
async function partnerEvents(h: InboxHarness, workspace: string, type: string): Promise<Event[]> {
  const events: Event[] = [];
  for (let page = 1; ; page++) {
    const answer = await h.call(
      'GET',
      `/v1/events?workspace=${workspace}&type=${type}&limit=${PAGE}&page=${page}`,
    );
    if (answer.status !== 200) throw new Error(`GET /v1/events answered ${answer.status}`);
    const data = answer.body.data as Event[];
    events.push(...data);
    if (data.length < PAGE || events.length >= answer.body.total) return events;
  }
}

/** The partner's events about one network message. */
export async function eventsAbout(h: InboxHarness, workspace: string, type: string, platformId: string) {
  return (await partnerEvents(h, workspace, type)).filter(
    (e) => e.data.message.platform_message_id === platformId,
  );
}

/** The messages of a conversation as REST lists them. */
export async function messagesOf(h: InboxHarness, conversation: string): Promise<MessageView[]> {
  return (await h.call('GET', `/v1/conversations/${conversation}/messages?limit=200`)).body
    .data as MessageView[];
}

/** Long enough for a webhook or an event still on its way to have arrived. */
export const settle = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));
