import { createPool, prismaAdapter } from '@svc/db';
import { PrismaClient } from './generated/prisma/client.ts';

export const SCHEMA = 'publishing';

export type Db = PrismaClient;

export function openDatabase(databaseUrl: string) {
  const pool = createPool(databaseUrl, SCHEMA);
  const prisma = new PrismaClient({ adapter: prismaAdapter(pool, SCHEMA) });
  return { pool, prisma };
}
