import { defineConfig } from 'vitest/config';

// One runner for the whole monorepo: every package and service keeps its tests in `test/`
// (integration, real Postgres/Redis/NATS) or next to the code as `*.test.ts` (pure logic).
export default defineConfig({
  test: {
    include: ['{packages,services}/*/{src,test}/**/*.test.ts', 'deploy/test/**/*.test.ts'],
    globalSetup: ['packages/testing/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
