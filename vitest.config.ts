import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One runner for the whole monorepo: every package, service, client and dev tool keeps its tests in `test/`
// (integration, real Postgres/Redis/NATS) or next to the code as `*.test.ts` (pure logic).
export default defineConfig({
  test: {
    include: ['{packages,services,clients,dev}/*/{src,test}/**/*.test.ts', 'deploy/test/**/*.test.ts'],
    globalSetup: ['dev/testing/src/global-setup.ts'],
    // A failed test prints what its services logged at warn and above meanwhile.
    setupFiles: ['dev/testing/src/failure-logs.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files wait on their services (child processes, Postgres, NATS) rather than compute:
    // two at once on a 2-core machine ran the suite in 5 minutes instead of 11, with every test
    // passing (vitest's default would be one worker there).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
