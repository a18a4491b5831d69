import { createPool, prismaAdapter } from '@svc/db';
import type { Logger } from '@svc/logging';
import { PrismaClient } from './generated/prisma/client.ts';

export const SCHEMA = 'publishing';

export type Db = PrismaClient;

export function openDatabase(databaseUrl: string, logger?: Logger) {
  const pool = createPool(databaseUrl, SCHEMA, undefined, logger);
  const prisma = new PrismaClient({ adapter: prismaAdapter(pool, SCHEMA) });
  return { pool, prisma };
}
