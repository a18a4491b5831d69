import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * "No cost when off": a service process started without tracing configured never loads the
 * OpenTelemetry SDK, only `@opentelemetry/api` (whose hooks then return at once). The process is
 * a real service (webhooks, from its entry point) with a module-load recorder (fixtures/).
 */
const RECORDER = path.join(import.meta.dirname, 'fixtures/record-modules.mjs');
const SDK_PACKAGES = ['sdk-trace', 'exporter-trace-otlp-http', 'context-async-hooks', 'resources', 'core'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-otel-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The OpenTelemetry packages a webhooks process loaded from its start to its stop. */
async function packagesLoaded(label: string, env: Record<string, string>): Promise<Set<string>> {
  const log = path.join(dir, `${label}.log`);
  const system = await startSystem({
    services: ['webhooks'],
    run: 'source',
    sandbox: false,
    env: { LOG_LEVEL: 'warn', MODULE_LOG: log, ...env },
    nodeFlags: () => ['--import', RECORDER],
  });
  await system.stop();
  const urls = (await readFile(log, 'utf8').catch(() => '')).split('\n');
  return new Set(urls.flatMap((url) => /\/@opentelemetry\/([^/]+)\//.exec(url)?.[1] ?? []));
}

describe('tracing off', () => {
  // Guarantee: without an exporter configured the SDK is not even loaded into a service process
  // (the dynamic import is behind the configuration); with one, the same recorder sees it loaded,
  // so the first check is not vacuous.
  it('loads no OpenTelemetry SDK module unless tracing is configured', async () => {
    const off = await packagesLoaded('off', {});
    expect(off.has('api')).toBe(true);
    expect(SDK_PACKAGES.filter((name) => off.has(name))).toEqual([]);

    const on = await packagesLoaded('on', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(SDK_PACKAGES.filter((name) => on.has(name))).toEqual(SDK_PACKAGES);
  }, 120_000);
});
