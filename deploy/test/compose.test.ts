import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startSandbox } from '../../dev/graph-sandbox/src/app.ts';
import { sandboxConfigSchema } from '../../dev/graph-sandbox/src/config.ts';
import { parseConfig, type z } from '../../packages/config/src/index.ts';
import { healthUrl } from '../healthcheck.mjs';
import { CONFIG_SCHEMAS } from './service-config.ts';

/**
 * docker-compose.yml as `docker compose` reads it (no engine runs on this machine, so it is checked
 * here rather than started): YAML merge keys resolved, `${NAME:-default}` interpolated with the
 * environment a user starts it with (none, by default).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; target: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  restart?: string;
}

function loadCompose(env: Record<string, string> = {}): Record<string, ComposeService> {
  const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8').replace(
    /\$\{([A-Z_]+)(?::-([^}]*))?\}/g,
    (_all, name: string, fallback = '') => env[name] || fallback,
  );
  return parse(text, { merge: true }).services;
}

const dockerfile = readFileSync(path.join(ROOT, 'deploy/Dockerfile'), 'utf8');
/** The text of one stage of deploy/Dockerfile. */
const stage = (name: string) =>
  dockerfile.split(/^FROM /m).find((s) => s.split('\n')[0]?.trim().endsWith(` AS ${name}`)) ?? '';

const services = loadCompose();
const runsImage = (s: ComposeService) => s.build?.target === 'runtime';
const serviceName = (s: ComposeService) => s.build?.args?.SERVICE ?? '';
const oneShot = (s: ComposeService) => s.restart === 'no';

describe('docker-compose.yml', () => {
  // Guarantee: every long-running container has a health check that can pass: the infrastructure
  // its own, each app container the image's (deploy/healthcheck.mjs), which must know a health URL
  // for the service it runs.
  it('gives every long-running container a health check that knows its service', () => {
    expect(stage('runtime')).toMatch(/^HEALTHCHECK .*"node", "\/app\/healthcheck\.mjs"\]$/m);
    for (const [name, service] of Object.entries(services)) {
      if (oneShot(service)) continue;
      if (runsImage(service)) {
        expect(service.healthcheck, name).toBeUndefined();
        expect(healthUrl(serviceName(service), service.environment ?? {}), name).toBeDefined();
      } else expect(service.healthcheck?.test.length, name).toBeGreaterThan(1);
    }
  });

  // Guarantee: the graph-sandbox's health URL really answers 200 on a running sandbox (its image
  // health check could never pass before: it has no ops port and no /healthz).
  it('reaches a running graph-sandbox through its health URL', async () => {
    const sandbox = await startSandbox(
      parseConfig(sandboxConfigSchema({ GRAPH_SANDBOX_PORT: '0', LOG_LEVEL: 'silent' }), {
        GRAPH_SANDBOX_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
    );
    try {
      const port = new URL(sandbox.url).port;
      const url = healthUrl('graph-sandbox', { GRAPH_SANDBOX_PORT: port }) ?? '';
      expect((await fetch(url)).status).toBe(200);
      const script = path.join(ROOT, 'deploy/healthcheck.mjs');
      // The image's command, run here (asynchronously: the sandbox answers from this process).
      const run = (env: Record<string, string>) =>
        promisify(execFile)(process.execPath, [script], { env: { PATH: process.env.PATH, ...env } });
      await expect(run({ SERVICE: 'graph-sandbox', GRAPH_SANDBOX_PORT: port })).resolves.toBeDefined();
      await expect(run({ SERVICE: 'graph-sandbox', GRAPH_SANDBOX_PORT: '1' })).rejects.toThrow();
    } finally {
      await sandbox.close();
    }
  });

  // Guarantee: the volumes app containers write to are folders the image prepares for the `node`
  // user (a new named volume copies the folder and its owner), never a root-owned path: the upload
  // volume is the image's MEDIA_DIR and no override moves it.
  it('mounts writable volumes where the image prepares them for node', () => {
    const runtime = stage('runtime');
    const owned = [...runtime.matchAll(/chown node:node ([^\s&]+)/g)].map((m) => m[1]);
    const mediaDir = runtime.match(/MEDIA_DIR=(\S+)/)?.[1];
    expect(owned).toContain(mediaDir);
    for (const [name, service] of Object.entries(services).filter(([, s]) => runsImage(s))) {
      for (const volume of service.volumes ?? []) {
        const [, target] = volume.split(':');
        expect(owned, `${name}: ${volume}`).toContain(target);
      }
      if (service.environment?.MEDIA_DIR) expect(service.environment.MEDIA_DIR, name).toBe(mediaDir);
    }
    const media = Object.entries(services).filter(([, s]) =>
      (s.volumes ?? []).some((v) => v.startsWith('media-data:')),
    );
    expect(media.map(([name]) => name).sort()).toEqual(['publishing', 'publishing-worker']);
  });

  // Guarantee: published ports listen on loopback unless the user asks for more (PUBLISH_ADDRESS).
  it('publishes ports on loopback only by default', () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]));
    expect(published.map(([name]) => name).sort()).toEqual(['gateway', 'graph-sandbox']);
    for (const [name, port] of published) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    const opened = loadCompose({ PUBLISH_ADDRESS: '0.0.0.0' });
    expect(opened.gateway?.ports).toEqual(['0.0.0.0:8080:8080']);
  });

  // Guarantee: each container starts once what it needs is ready: the infrastructure healthy, the
  // migrations completed, the services it calls healthy (not merely started); no unknown or
  // circular dependency.
  it('orders the start on health and completed migrations', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        const dependency = services[target];
        if (!dependency) throw new Error(`${name} depends on ${target}, which is no service`);
        expect(condition, `${name} → ${target}`).toBe(
          oneShot(dependency) ? 'service_completed_successfully' : 'service_healthy',
        );
      }
      if (runsImage(service))
        expect(Object.keys(service.depends_on ?? {}), name).toEqual(
          expect.arrayContaining(['postgres', 'redis', 'nats', 'migrate']),
        );
    }
    const visiting = new Set<string>();
    const visit = (name: string, trail: string[]): void => {
      if (trail.includes(name)) throw new Error(`dependency cycle: ${[...trail, name].join(' → ')}`);
      if (visiting.has(name)) return;
      visiting.add(name);
      for (const next of Object.keys(services[name]?.depends_on ?? {})) visit(next, [...trail, name]);
    };
    for (const name of Object.keys(services)) visit(name, []);
  });

  // Guarantee: every app container's environment is read by its service and passes its config
  // schema (a typo would silently leave a default).
  it('sets only variables the services read, and each starts with them', () => {
    const schemas: Record<string, (env: Record<string, string | undefined>) => z.ZodObject<z.ZodRawShape>> = {
      ...CONFIG_SCHEMAS,
      'graph-sandbox': (env) => sandboxConfigSchema(env) as unknown as z.ZodObject<z.ZodRawShape>,
    };
    for (const [name, service] of Object.entries(services).filter(([, s]) => runsImage(s))) {
      const make = schemas[serviceName(service)];
      if (!make) throw new Error(`${name}: no config schema for ${serviceName(service)}`);
      const env = service.environment ?? {};
      const schema = make(env);
      const shape =
        'shape' in schema ? schema.shape : (schema as unknown as { in: { shape: object } }).in.shape;
      expect(
        Object.keys(env).filter((k) => !(k in shape)),
        name,
      ).toEqual([]);
      expect(() => parseConfig(schema, env), name).not.toThrow();
    }
  });
});
