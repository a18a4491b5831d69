// Operator command, run from the repository root: `pnpm --silent admin <command>`; prints one JSON
// object on stdout (errors: one JSON object on stderr, exit 1).
//   partners create --slug <slug> [--name <name>]   → { partner, key }
//   partners issue-key --slug <slug>                → { partner, key }
//   partners set-limit --slug <slug> --per-minute <n> → { partner }
//   partners set-embed-limit --slug <slug> --per-minute <n> → { partner } (per embed session)
//   keys revoke --id <key_id>                       → { revoked: key_id }
import { parseArgs } from 'node:util';
import { AuthCache } from '@svc/auth-cache';
import { parseConfig } from '@svc/config';
import { ServiceError } from '@svc/errors';
import { Redis } from 'ioredis';
import { identityConfigSchema } from '../config.ts';
import { openDatabase } from '../db.ts';
import {
  createPartner,
  issuePartnerKey,
  revokeKeyById,
  setPartnerEmbedLimit,
  setPartnerLimit,
} from './partners.ts';

async function main(): Promise<unknown> {
  const [group, command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      slug: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
      'per-minute': { type: 'string' },
    },
  });
  const config = parseConfig(identityConfigSchema(process.env), process.env);
  const { pool, prisma } = openDatabase(config.DATABASE_URL);
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  const cache = new AuthCache(redis, config.REDIS_PREFIX);
  try {
    switch (`${group} ${command}`) {
      case 'partners create':
        return await createPartner(prisma, required(values.slug, 'slug'), values.name);
      case 'partners issue-key':
        return await issuePartnerKey(prisma, required(values.slug, 'slug'));
      case 'partners set-limit':
        return await setPartnerLimit(
          prisma,
          cache,
          required(values.slug, 'slug'),
          Number(required(values['per-minute'], 'per-minute')),
        );
      case 'partners set-embed-limit':
        return await setPartnerEmbedLimit(
          prisma,
          cache,
          required(values.slug, 'slug'),
          Number(required(values['per-minute'], 'per-minute')),
        );
      case 'keys revoke':
        return await revokeKeyById(prisma, cache, required(values.id, 'id'));
      default:
        throw new ServiceError(
          'validation_error',
          'usage: admin partners create|issue-key|set-limit|set-embed-limit … | admin keys revoke --id <key_id>',
        );
    }
  } finally {
    redis.disconnect();
    await prisma.$disconnect();
    await pool.end();
  }
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new ServiceError('validation_error', `--${flag} is required`, { field: flag });
  return value;
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error: unknown) => {
    const body =
      error instanceof ServiceError ? error.toBody() : { code: 'internal_error', message: String(error) };
    process.stderr.write(`${JSON.stringify({ error: body })}\n`);
    process.exit(1);
  },
);
