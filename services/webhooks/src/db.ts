import { createPool, prismaAdapter } from '@svc/db';
import { PrismaClient } from './generated/prisma/client.ts';

const SCHEMA = 'webhooks';

export type Db = PrismaClient;

export function openDatabase(databaseUrl: string, poolSize = 10) {
  const pool = createPool(databaseUrl, SCHEMA, poolSize);
  const prisma = new PrismaClient({ adapter: prismaAdapter(pool, SCHEMA) });
  return { pool, prisma };
}
