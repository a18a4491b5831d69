import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './child-process.ts';
import type { InProcess } from './in-process.ts';

export interface Partner {
  partnerId: string;
  slug: string;
  /** The partner key, shown once. */
  key: string;
}

export interface PartnerOptions {
  name?: string;
  /** Requests a minute per key, instead of the default (300). */
  limitPerMinute?: number;
}

/**
 * A partner as an operator creates one: with identity's admin functions on the running service's
 * database when identity runs in this process, else with the admin command (`pnpm admin`), which
 * is what operators run against a deployed identity.
 */
export async function createPartner(
  identity: InProcess['identity'] | undefined,
  identityEnv: Record<string, string>,
  slug: string,
  options: PartnerOptions,
): Promise<Partner> {
  return identity
    ? createInProcess(identity, identityEnv, slug, options)
    : createWithCommand(identityEnv, slug, options);
}

async function createInProcess(
  identity: InProcess['identity'],
  env: Record<string, string>,
  slug: string,
  options: PartnerOptions,
): Promise<Partner> {
  const { createPartner, setPartnerLimit } = await import('@svc/identity/admin');
  const created = await createPartner(identity.prisma, slug, options.name);
  if (options.limitPerMinute !== undefined) {
    const [{ AuthCache }, { Redis }] = await Promise.all([import('@svc/auth-cache'), import('ioredis')]);
    const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    try {
      const cache = new AuthCache(redis, env.REDIS_PREFIX ?? '');
      await setPartnerLimit(identity.prisma, cache, slug, options.limitPerMinute);
    } finally {
      redis.disconnect();
    }
  }
  return { partnerId: created.partner.id, slug, key: created.key };
}

async function createWithCommand(
  env: Record<string, string>,
  slug: string,
  options: PartnerOptions,
): Promise<Partner> {
  const created = (await admin(env, ['partners', 'create', '--slug', slug, ...nameFlag(options)])) as {
    partner: { id: string };
    key: string;
  };
  if (options.limitPerMinute !== undefined)
    await admin(env, [
      'partners',
      'set-limit',
      '--slug',
      slug,
      '--per-minute',
      String(options.limitPerMinute),
    ]);
  return { partnerId: created.partner.id, slug, key: created.key };
}

const nameFlag = (options: PartnerOptions) => (options.name ? ['--name', options.name] : []);

async function admin(env: Record<string, string>, args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'services/identity/src/admin/cli.ts'), ...args],
    { cwd: ROOT, env: { ...process.env, ...env } },
  );
  return JSON.parse(stdout);
}
