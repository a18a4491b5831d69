import { defineConfig } from 'vitest/config';

// `pnpm test:faults`: the fault suite, apart from `pnpm test` (it starts its own Postgres, Redis
// and NATS and the whole system, then kills and restarts them; a few minutes, one file in order).
export default defineConfig({
  test: {
    include: ['dev/testing/faults/**/*.faults.test.ts'],
    globalSetup: ['dev/testing/faults/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
