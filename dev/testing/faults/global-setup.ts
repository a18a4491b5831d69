import { buildBundles } from '../src/child-process.ts';

/**
 * The services' production bundles, built before the suite as `pnpm start` builds them; here and
 * not in the test file, since the build blocks the process that runs it for a minute.
 */
export function setup(): void {
  buildBundles();
}
