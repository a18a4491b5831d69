import type { ConversationView, MessageView } from '@svc/contracts/public';
import { api, connectThroughLink, createUser, recordEvents } from '@svc/testing';
import { type SandboxControl, type System, startSystem } from '@svc/testing/system';

/** A clock the inbox reads, moved with the sandbox's, so messaging windows close on a call. */
class TestClock {
  private offsetMs = 0;

  now = (): Date => new Date(Date.now() + this.offsetMs);

  async advance(system: { sandboxControl: SandboxControl }, seconds: number): Promise<void> {
    this.offsetMs += seconds * 1000;
    await system.sandboxControl('POST', '/__sandbox/clock', { advance_seconds: seconds });
  }
}

export interface InboxHarness {
  system: System;
  clock: TestClock;
  call: ReturnType<typeof api>;
  key: string;
  recorder: Awaited<ReturnType<typeof recordEvents>>;
  stop(): Promise<void>;
}

/** The whole system in this process, with the inbox on a test clock and a recorder of events. */
export async function startInbox(): Promise<InboxHarness> {
  const clock = new TestClock();
  const system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
    env: { UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000', GRAPH_API_RETRY_BASE_MS: '10' },
    startOptions: { inbox: { now: clock.now } },
  });
  const { key } = await system.createPartner();
  const call = api(system.gatewayUrl, key);
  const recorder = await recordEvents(system.prefix);
  return {
    system,
    clock,
    call,
    key,
    recorder,
    async stop() {
      await recorder.close();
      await system.stop();
    },
  };
}

export interface Connected {
  workspace: string;
  user: { user: { id: string }; pages: { id: string; instagram: { id: string } | null }[] };
  ig: { id: string; platform_id: string; page_id: string };
  page: { id: string; platform_id: string; page_id: string };
}

/** A workspace with a Page and its Instagram account connected through the hosted flow. */
export async function connectedWorkspace(
  h: InboxHarness,
  name = 'Inbox',
  existing?: Connected['user'],
): Promise<Connected> {
  const workspace = (await h.call('POST', '/v1/workspaces', { name })).body.id as string;
  const user = existing ?? (await sandboxUser(h, name));
  await connectUser(h, workspace, user);
  type Listed = Connected['ig'] & { network: string };
  const accounts = (await h.call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as Listed[];
  const ig = accounts.find((a) => a.network === 'photo_network');
  const page = accounts.find((a) => a.network === 'page_network');
  if (!ig || !page) throw new Error('accounts not connected');
  return { workspace, user, ig, page };
}

/**
 * The sandbox user approves the hosted connect flow of a new link of the workspace: the first
 * time, its Page and Instagram account are connected; again, they are reconnected (active again).
 */
export async function connectUser(
  h: InboxHarness,
  workspace: string,
  user: Connected['user'],
): Promise<void> {
  const stack = { sandbox: { url: h.system.addresses.sandboxUrl }, sandboxControl: h.system.sandboxControl };
  const link = (await h.call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
}

/** A sandbox user with a Page and its linked Instagram account, not connected yet. */
export async function sandboxUser(h: InboxHarness, name: string): Promise<Connected['user']> {
  const pages = [{ name: `${name} Page`, instagram: { username: `${name.toLowerCase()}_ig` } }];
  return createUser({ sandboxControl: h.system.sandboxControl }, pages);
}

/** What an inbox event carries. */
export interface InboxEventData {
  conversation: ConversationView;
  message: MessageView;
}

export const dataOf = (event: { data: unknown }) => event.data as InboxEventData;
