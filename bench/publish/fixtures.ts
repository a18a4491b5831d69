// Fixtures of bench:publish: workspaces, each with a Page + Instagram account and a JPEG.
import { AccountsService, createClient } from '@svc/contracts';
import { connectThroughLink, createUser, uploadFile } from '@svc/testing';
import type { SandboxControl } from '@svc/testing/system';
import sharp from 'sharp';
import { VAULT_CREDENTIAL, WORKSPACES } from './settings.ts';

export interface Fixture {
  workspace: string;
  media: string;
  ig: { id: string; platformId: string; token: string };
  page: { id: string; platformId: string; token: string };
}

export interface FixtureSystem {
  gatewayUrl: string;
  sandboxUrl: string;
  accountsUrl: string;
  sandboxControl: SandboxControl;
  key: string;
}

/** A sandbox user with a Page and its Instagram account, connected through the hosted flow. */
async function connectPageAndInstagram(at: FixtureSystem, linkUrl: string, index: number): Promise<void> {
  const user = await createUser(at, [
    { name: `Bench Bakery ${index}`, instagram: { username: `bench_bakery_${index}` } },
  ]);
  const finished = await connectThroughLink({ sandbox: { url: at.sandboxUrl } }, linkUrl, 'page_network', {
    userId: user.user.id,
    decision: 'approve',
  });
  if (finished.status >= 400) throw new Error(`connect callback: ${finished.status}`);
}

/** The gateway as the partner; a refusal fails the run. */
function partnerCall(gatewayUrl: string, key: string) {
  return async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${gatewayUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status >= 300)
      throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
}

export async function createFixtures(at: FixtureSystem) {
  const call = partnerCall(at.gatewayUrl, at.key);
  const jpeg = await sharp({
    create: { width: 1080, height: 1080, channels: 3, background: { r: 200, g: 120, b: 40 } },
  })
    .jpeg()
    .toBuffer();
  const vault = createClient(AccountsService, at.accountsUrl, { credential: VAULT_CREDENTIAL });
  const token = async (accountId: string) => {
    const { token, account } = await vault.getAccountToken({ accountId });
    return { token, platformId: account?.platformId ?? '' };
  };
  const one = async (index: number): Promise<Fixture> => {
    const workspace = (await call('POST', '/v1/workspaces', { name: `Bench ${index}` })).id as string;
    const link = await call('POST', `/v1/workspaces/${workspace}/connect-links`, {});
    await connectPageAndInstagram(at, link.url as string, index);
    const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).data as {
      id: string;
      network: string;
    }[];
    const ig = accounts.find((a) => a.network === 'photo_network');
    const page = accounts.find((a) => a.network === 'page_network');
    if (!ig || !page) throw new Error(`workspace ${workspace}: accounts not connected`);
    return {
      workspace,
      media: await uploadFile(at.gatewayUrl, at.key, workspace, jpeg, 'photo.jpg'),
      ig: { id: ig.id, ...(await token(ig.id)) },
      page: { id: page.id, ...(await token(page.id)) },
    };
  };
  try {
    const fixtures: Fixture[] = [];
    for (let i = 0; i < WORKSPACES; i += 5) {
      const batch = Array.from({ length: Math.min(5, WORKSPACES - i) }, (_, j) => one(i + j));
      fixtures.push(...(await Promise.all(batch)));
    }
    return { fixtures, jpeg };
  } finally {
    vault.close();
  }
}
