import { connectBus } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { createLogger } from '@svc/logging';
import { CookieJar } from './cookie-jar.ts';
import { api } from './http.ts';
import type { SandboxControl } from './sandbox.ts';

/** What the scripted user needs of a stack: the sandbox (and its control API for new users). */
type WithSandbox = { sandbox: { url: string } };

/**
 * A scripted end user for the hosted connect flow: opens the link, starts the consent, answers
 * the sandbox's consent form the way its page would post it, and follows our callback. Every
 * response body is kept, so the suite can check that no secret was ever shown.
 */
export interface SandboxUser {
  user: { id: string };
  pages: { id: string; name: string; instagram: { id: string; username: string } | null }[];
}

export const seen: string[] = [];

/** The scripted user's browser: the OAuth callback must bring back the cookie /start set. */
const browser = new CookieJar();

async function get(url: string, init: RequestInit = {}) {
  const response = await browser.fetch(url, init);
  const body = await response.text();
  seen.push(body, response.headers.get('location') ?? '');
  return { status: response.status, body, location: response.headers.get('location') ?? '', response };
}

export const open = (url: string, init?: RequestInit) => get(url, init);

/** The API client of `http.ts`, keeping every response body for the secret scan. */
export function trackedApi(baseUrl: string, key: string): ReturnType<typeof api> {
  const call = api(baseUrl, key);
  return async (...args) => {
    const response = await call(...args);
    seen.push(JSON.stringify(response.body ?? ''));
    return response;
  };
}

export async function createUser(
  stack: { sandboxControl: SandboxControl },
  pages: unknown[],
): Promise<SandboxUser> {
  return stack.sandboxControl<SandboxUser>('POST', '/__sandbox/users', { name: 'Jane', pages });
}

/** A workspace and a connect link for it; returns the link's page URL and the workspace id. */
export async function newLink(call: ReturnType<typeof api>, body: Record<string, unknown> = {}) {
  const workspace = await call('POST', '/v1/workspaces', { name: 'Acme Bakery HQ' });
  const link = await call('POST', `/v1/workspaces/${workspace.body.id}/connect-links`, body);
  if (link.status !== 201) throw new Error(`connect link: ${link.status} ${JSON.stringify(link.body)}`);
  return { workspaceId: workspace.body.id as string, url: link.body.url as string, link: link.body };
}

/** Start at the link for one network; returns the consent dialog URL (302 target). */
export async function start(linkUrl: string, network: string): Promise<URL> {
  const started = await get(`${linkUrl}/${network}/start`);
  if (started.status !== 302) throw new Error(`start: ${started.status} ${started.body}`);
  return new URL(started.location);
}

/**
 * Answers the consent dialog as the sandbox's form posts it; returns where the browser goes next
 * (our callback with code or error, and the state).
 */
export async function consent(
  stack: WithSandbox,
  dialog: URL,
  answer: { userId?: string; decision: 'approve' | 'deny'; pageIds?: string[]; scopes?: string[] },
): Promise<string> {
  const form = new URLSearchParams({
    client_id: dialog.searchParams.get('client_id') ?? '',
    redirect_uri: dialog.searchParams.get('redirect_uri') ?? '',
    state: dialog.searchParams.get('state') ?? '',
    scope: answer.scopes?.join(',') ?? dialog.searchParams.get('scope') ?? '',
    decision: answer.decision,
    user_id: answer.userId ?? '',
  });
  for (const id of answer.pageIds ?? []) form.append('page_id', id);
  const response = await fetch(`${stack.sandbox.url}/__sandbox/consent`, {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  const location = response.headers.get('location');
  if (response.status !== 302 || !location) throw new Error(`consent: ${response.status}`);
  return location;
}

/** The whole flow for one user and network; returns our callback's answer. */
export async function connectThroughLink(
  stack: WithSandbox,
  linkUrl: string,
  network: string,
  answer: Parameters<typeof consent>[2],
) {
  const dialog = await start(linkUrl, network);
  return open(await consent(stack, dialog, answer));
}

/**
 * A workspace with a Page and its linked Instagram account, connected through a connect link by
 * a new sandbox user; answers their account records (with `platform_id`, the network's id).
 */
export async function workspaceWithAccounts(
  stack: WithSandbox & { sandboxControl: SandboxControl },
  call: ReturnType<typeof api>,
  names: { page: string; username: string } = { page: 'Acme Bakery', username: 'acme' },
) {
  const workspace = (await call('POST', '/v1/workspaces', { name: names.page })).body.id as string;
  const user = await createUser(stack, [{ name: names.page, instagram: { username: names.username } }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as {
    id: string;
    network: string;
    platform_id: string;
  }[];
  const ig = accounts.find((a) => a.network === 'photo_network');
  const page = accounts.find((a) => a.network === 'page_network');
  if (!ig || !page) throw new Error('accounts not connected');
  return { workspace, user, ig, page };
}

/** Every event published on this stack's EVENTS stream, in order, as it arrives. */
export async function recordEvents(prefix: string) {
  const logger = createLogger('test-recorder', { level: 'silent' });
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'test-recorder', logger });
  const consumer = await bus.js.consumers.get(bus.subjects.streamName('events'));
  const messages = await consumer.consume();
  const events: EventEnvelope[] = [];
  const done = (async () => {
    for await (const message of messages) events.push(message.json<EventEnvelope>());
  })();
  return {
    events,
    ofType: (type: string) => events.filter((e) => e.type === type),
    async close() {
      await messages.close();
      await done;
      await bus.close();
    },
  };
}
