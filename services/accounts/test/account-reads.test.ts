import { AccountsService, createClient, type ServiceClient } from '@svc/contracts';
import { newId } from '@svc/ids';
import { uniquePrefix } from '@svc/testing';
import { type InProcess, type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountJson, toAccountMessage } from '../src/account-view.ts';
import type { Account } from '../src/generated/prisma/client.ts';

/**
 * The hot account reads (GetAccount, DescribeAccounts, GetAccountToken) run as named prepared statements
 * on the pool, not through Prisma. These tests pin what they must keep: the caller's scope, the
 * not_found answers, and rows identical to what Prisma reads.
 *
 * One accounts service on a fresh database, reached over real gRPC. Accounts are written straight
 * with Prisma (no connect flow needed); identity is never called by these reads.
 */
type Client = ServiceClient<typeof AccountsService>;

let system: System;
let service: InProcess['accounts'];
let client: Client;
let vault: Client;
let logs: Record<string, unknown>[] = [];

const partnerA = newId('partner');
const partnerB = newId('partner');
const workspaceA1 = newId('workspace');
const workspaceA2 = newId('workspace');
const workspaceB1 = newId('workspace');
let a1: Account;
let a1Expired: Account;
let a2: Account;
let b1: Account;

const partnerCaller = { partnerId: partnerA, workspaceId: '' };
const workspaceCaller = { partnerId: partnerA, workspaceId: workspaceA1 };

async function createAccount(
  partnerId: string,
  workspaceId: string,
  fields: Partial<Account> & { plainToken?: string | null } = {},
): Promise<Account> {
  const { plainToken = `EAA-${uniquePrefix('tok')}`, ...rest } = fields;
  const key = { workspaceId, network: rest.network ?? 'page_network', platformId: uniquePrefix('plat') };
  return service.prisma.account.create({
    data: {
      id: newId('account'),
      partnerId,
      ...key,
      username: 'the_page',
      displayName: 'The Page',
      avatarUrl: 'https://example.test/avatar.png',
      pageId: uniquePrefix('page'),
      status: 'active',
      scopes: ['pages_show_list', 'pages_manage_posts'],
      token: plainToken === null ? null : service.vault.seal(key, plainToken),
      tokenExpiresAt: new Date('2027-01-02T03:04:05.678Z'),
      providerUserId: 'user-1',
      connectedAt: new Date('2026-11-01T10:00:00.123Z'),
      ...rest,
    },
  });
}

beforeAll(async () => {
  // Identity is not started: these reads never call it (its address answers nothing).
  system = await startSystem({ services: ['accounts'], sandbox: false, prefix: uniquePrefix('a') });
  service = system.service('accounts');
  logs = system.logs;
  const address = `127.0.0.1:${service.port}`;
  client = createClient(AccountsService, address);
  vault = createClient(AccountsService, address, { credential: 'development-vault-publishing' });

  a1 = await createAccount(partnerA, workspaceA1);
  // Every nullable column set the other way: null expiry and token, a last error.
  a1Expired = await createAccount(partnerA, workspaceA1, {
    network: 'photo_network',
    status: 'expired',
    lastError: 'The token expired',
    tokenExpiresAt: null,
    providerUserId: null,
    scopes: [],
    plainToken: null,
  });
  a2 = await createAccount(partnerA, workspaceA2);
  b1 = await createAccount(partnerB, workspaceB1);
});

afterAll(async () => {
  client?.close();
  vault?.close();
  await system?.stop();
});

/** A received message's fields, without protobuf's `$typeName`, to compare with `toAccountMessage`. */
function fieldsOf(message: { $typeName: string } | undefined) {
  if (!message) return undefined;
  const { $typeName: _, ...fields } = message;
  return fields;
}

describe('DescribeAccounts', () => {
  // Guarantee: every known account among the ids, whatever its partner or workspace, with its owner
  // (the caller checks its scope against it); unknown ids (and no ids) are simply absent.
  it('answers each known account with its partner', async () => {
    const { accounts } = await client.describeAccounts({
      accountIds: [a1.id, a1Expired.id, a2.id, b1.id, newId('account')],
    });
    const owners = Object.fromEntries(accounts.map((d) => [d.account?.id, d.partnerId]));
    expect(owners).toEqual({
      [a1.id]: partnerA,
      [a1Expired.id]: partnerA,
      [a2.id]: partnerA,
      [b1.id]: partnerB,
    });
    expect((await client.describeAccounts({ accountIds: [] })).accounts).toEqual([]);
  });

  // Guarantee: each account is the record as the store holds it, the same one GetAccount shows.
  it('renders each account as it is stored', async () => {
    const { accounts } = await client.describeAccounts({ accountIds: [a1.id, a1Expired.id] });
    for (const { account } of accounts) {
      const stored = await service.prisma.account.findUniqueOrThrow({ where: { id: account?.id ?? '' } });
      expect(fieldsOf(account)).toEqual(toAccountMessage(stored));
      const single = await client.getAccount({ caller: partnerCaller, accountId: stored.id });
      expect(JSON.parse(single.accountJson)).toEqual(accountJson(stored));
    }
  });
});

describe('GetAccount', () => {
  // Guarantee (unchanged by the move off Prisma): in scope answers the account; another
  // workspace's or another partner's is not_found (404), not forbidden.
  it('answers in-scope accounts and not_found out of scope', async () => {
    for (const account of [a1, a1Expired]) {
      const own = await client.getAccount({ caller: workspaceCaller, accountId: account.id });
      expect(JSON.parse(own.accountJson)).toEqual(accountJson(account));
    }
    const viaPartner = await client.getAccount({ caller: partnerCaller, accountId: a2.id });
    expect(JSON.parse(viaPartner.accountJson).id).toBe(a2.id);
    await expect(client.getAccount({ caller: workspaceCaller, accountId: a2.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(client.getAccount({ caller: partnerCaller, accountId: b1.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      client.getAccount({ caller: partnerCaller, accountId: newId('account') }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the pool reads', () => {
  // Guarantee: the row mapping gives the very value Prisma gives (camelCase fields, Dates, nulls,
  // arrays), so everything downstream (toAccountMessage, openToken, events) is unaffected.
  it('map rows to the same Account values Prisma reads', async () => {
    for (const account of [a1, a1Expired, a2]) {
      const prisma = await service.prisma.account.findUnique({ where: { id: account.id } });
      expect(await service.store.byId(account.id)).toStrictEqual(prisma);
      expect(await service.store.visible(partnerCaller, account.id)).toStrictEqual(prisma);
    }
    const batch = await service.store.describe([a1.id, a1Expired.id]);
    const prisma = await service.prisma.account.findMany({ where: { id: { in: [a1.id, a1Expired.id] } } });
    const byId = (rows: Account[]) => [...rows].sort((x, y) => x.id.localeCompare(y.id));
    expect(byId(batch)).toStrictEqual(byId(prisma));
  });
});

describe('GetAccountToken', () => {
  // Guarantee: the vault answers the same account record as a Prisma read renders, the decrypted
  // token and its subject, and still logs who got a token.
  it('returns the account as Prisma reads it, with the decrypted token', async () => {
    const plainToken = `EAA-${uniquePrefix('secret')}`;
    const account = await createAccount(partnerB, workspaceB1, { plainToken });
    const answer = await vault.getAccountToken({ accountId: account.id });
    const prisma = await service.prisma.account.findUnique({ where: { id: account.id } });
    expect(prisma).not.toBeNull();
    expect(fieldsOf(answer.account)).toEqual(toAccountMessage(prisma as Account));
    expect(answer.token).toBe(plainToken);
    expect(answer.tokenSubject).toBe(account.pageId);
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: 'token handed out', account: account.id, client: 'publishing' }),
    );
  });

  // Guarantee: the vault still refuses callers without a vault credential, and answers not_found
  // for an unknown account and account_disconnected for one without a token.
  it('keeps the vault authorization and its errors', async () => {
    await expect(client.getAccountToken({ accountId: a1.id })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(vault.getAccountToken({ accountId: newId('account') })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(vault.getAccountToken({ accountId: a1Expired.id })).rejects.toMatchObject({
      code: 'account_disconnected',
    });
  });
});
