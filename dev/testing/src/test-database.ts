import { randomBytes } from 'node:crypto';
import type {} from 'vitest';
import { adminQuery, TEST_DATABASE_PREFIX, templateDatabase, testDatabaseUrl } from './database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    testRun: string;
  }
}

/** A fresh database cloned from this run's migrated template; each test file gets its own. */
export async function createTestDatabase(): Promise<string> {
  // Loaded here, not at the top: vitest can only be imported inside a test run, and benches import
  // this package's other helpers.
  const { inject } = await import('vitest');
  const run = inject('testRun');
  const name = `${TEST_DATABASE_PREFIX}${run}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${templateDatabase(run)}`);
  return testDatabaseUrl(name);
}
