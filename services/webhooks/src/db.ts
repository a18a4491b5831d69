import { createPool, prismaAdapter } from '@svc/db';
import type { Logger } from '@svc/logging';
import { PrismaClient } from './generated/prisma/client.ts';

const SCHEMA = 'webhooks';

export type Db = PrismaClient;

export function openDatabase(databaseUrl: string, logger?: Logger, poolSize = 10) {
  const pool = createPool(databaseUrl, SCHEMA, poolSize, logger);
  const prisma = new PrismaClient({ adapter: prismaAdapter(pool, SCHEMA) });
  return { pool, prisma };
}
