import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// docker-compose.yml and deploy/ cannot be run here (no Docker engine), so this file checks their
// shape: the guarantees below are what a user relies on when running `docker compose up`.

const root = path.resolve(import.meta.dirname, '../../..');
const INFRA = ['postgres', 'redis', 'nats'] as const;
const ONE_SHOT = ['migrate'] as const;

interface ComposeService {
  image?: string;
  command?: string | string[];
  build?: { context?: string; dockerfile?: string; target?: string; args?: Record<string, string> };
  environment?: Record<string, string> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string | string[] };
}

// `merge: true` resolves the `<<: *anchor` keys the file uses, as Docker Compose does.
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;
const serviceFolders = readdirSync(path.join(root, 'services'), { withFileTypes: true })
  .filter(
    (entry) => entry.isDirectory() && existsSync(path.join(root, 'services', entry.name, 'package.json')),
  )
  .map((entry) => entry.name);
/** The folder an app image is built from, as deploy/Dockerfile picks it. */
const imageFolder = (args: Record<string, string> = {}) =>
  args.SERVICE_DIR ?? `services/${args.SERVICE ?? ''}`;
const appServices = Object.keys(services).filter(
  (name) => !(INFRA as readonly string[]).includes(name) && !(ONE_SHOT as readonly string[]).includes(name),
);

function environment(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.split('=').slice(1).join('=')]));
}

describe('docker-compose.yml', () => {
  // Guarantee: `docker compose up` runs every service of the monorepo; a new folder in services/
  // cannot be forgotten in the compose file.
  it('has a compose service for every folder in services/', () => {
    expect(serviceFolders.length).toBeGreaterThan(0);
    for (const folder of serviceFolders)
      expect(Object.keys(services), `services/${folder}`).toContain(folder);
  });

  // Guarantee: every app service is built from the shared Dockerfile for its own folder (in
  // services/, or dev/ for the graph-sandbox), so the image really contains the service the compose
  // entry is named after (`<folder>`, or `<folder>-<role>` for a service run in parts, as
  // publishing-worker).
  it('builds each app service from deploy/Dockerfile with SERVICE set to its folder', () => {
    for (const name of appServices) {
      const build = services[name]?.build;
      expect(build?.dockerfile, name).toBe('deploy/Dockerfile');
      expect(build?.target, name).toBe('runtime');
      const service = build?.args?.SERVICE ?? '';
      const folder = imageFolder(build?.args);
      const builds = `compose service ${name} builds ${folder}`;
      expect(['services', 'dev'], builds).toContain(path.dirname(folder));
      expect(path.basename(folder), builds).toBe(service);
      expect(existsSync(path.join(root, folder, 'package.json')), builds).toBe(true);
      const named = name === service || name.startsWith(`${service}-`);
      expect(named, `${name} is named after ${service}`).toBe(true);
    }
  });

  // Guarantee: no service starts before Postgres, Redis and NATS answer, nor before the schema is
  // migrated (otherwise it crashes or serves errors on a cold start).
  it('starts every app service after healthy infrastructure and a successful migration', () => {
    expect(appServices.length).toBeGreaterThan(0);
    for (const name of appServices) {
      const dependsOn = services[name]?.depends_on;
      expect(Array.isArray(dependsOn), `${name}: depends_on needs conditions, not a list`).toBe(false);
      const conditions = Array.isArray(dependsOn) ? {} : (dependsOn ?? {});
      for (const infra of INFRA)
        expect(conditions[infra]?.condition, `${name} → ${infra}`).toBe('service_healthy');
      expect(conditions.migrate?.condition, `${name} → migrate`).toBe('service_completed_successfully');
    }
  });

  // Guarantee: the migration job runs against a ready database and exits (it is not a server).
  it('has a one-shot migrate service that runs the migrations once Postgres is healthy', () => {
    const migrate = services.migrate;
    expect(migrate?.build?.dockerfile).toBe('deploy/Dockerfile');
    expect(migrate?.build?.target).toBe('migrate');
    const dependsOn = Array.isArray(migrate?.depends_on) ? {} : (migrate?.depends_on ?? {});
    expect(dependsOn.postgres?.condition).toBe('service_healthy');
    const dockerfile = readFileSync(path.join(root, 'deploy/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/FROM \S+ AS migrate\n[\s\S]*CMD \["node", "scripts\/migrate\.ts"\]/);
  });

  // Guarantee: `service_healthy` conditions can only be met if the infrastructure defines a
  // healthcheck; without one, dependants would wait forever.
  it('gives Postgres, Redis and NATS healthchecks, on the expected images', () => {
    const images = { postgres: /^postgres:16/, redis: /^redis:7/, nats: /^nats:2/ };
    for (const infra of INFRA) {
      const service = services[infra];
      expect(service?.image, infra).toMatch(images[infra]);
      expect(service?.healthcheck?.test, `${infra} healthcheck`).toBeTruthy();
    }
  });

  // Guarantee: NATS runs with JetStream, which the event streams and the outbox relay require.
  it('runs NATS with JetStream enabled', () => {
    const command = services.nats?.command;
    const args = Array.isArray(command) ? command : (command ?? '').split(/\s+/);
    expect(args).toContain('-js');
  });

  // Guarantee: the services find each other by their compose names, the gateway is reachable from
  // the host, and identity's gRPC server accepts connections from other containers.
  it('wires the services to the infrastructure and to each other', () => {
    // The graph-sandbox reads no database, Redis or NATS setting (deploy/test/compose.test.ts).
    for (const name of appServices.filter((service) => service !== 'graph-sandbox')) {
      const env = environment(services[name] ?? {});
      expect(env.APP_ENV, name).toBeDefined();
      expect(env.DATABASE_URL, name).toMatch(/@postgres:5432\//);
      expect(env.REDIS_URL, name).toBe('redis://redis:6379');
      expect(env.NATS_URL, name).toBe('nats://nats:4222');
    }
    const gateway = environment(services.gateway ?? {});
    expect(gateway).toMatchObject({ HOST: '0.0.0.0', PORT: '8080', IDENTITY_GRPC_URL: 'identity:50051' });
    // Published on the host's loopback unless PUBLISH_ADDRESS says otherwise (deploy/test/compose.test.ts).
    expect(services.gateway).toHaveProperty(
      'ports',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's variable, kept for compose to substitute
      expect.arrayContaining(['${PUBLISH_ADDRESS:-127.0.0.1}:8080:8080']),
    );
    expect(environment(services.identity ?? {}).IDENTITY_GRPC_ADDRESS).toBe('0.0.0.0:50051');
  });
});

describe('deploy/Dockerfile', () => {
  const file = path.join(root, 'deploy/Dockerfile');

  // Guarantee: `docker compose build` has a Dockerfile to build, at the path the compose file names.
  it('exists', () => {
    expect(existsSync(file)).toBe(true);
  });

  // Guarantee: images run on Node 24 LTS (Node 20 is past its end of life), in every stage.
  it('uses a Node 24 base image', () => {
    const text = readFileSync(file, 'utf8');
    const defaultImage = /^ARG NODE_IMAGE=(\S+)/m.exec(text)?.[1];
    const bases = [...text.matchAll(/^FROM (\S+)/gm)].map((match) => match[1] ?? '');
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) {
      const image = /^\$\{NODE_IMAGE\}$/.test(base) ? defaultImage : base;
      // A base is either a Node 24 image or one of this file's own earlier stages.
      const isStage = new RegExp(`^FROM \\S+ AS ${base}\\b`, 'm').test(text);
      if (!isStage) expect(image, `FROM ${base}`).toMatch(/^node:24(\b|-|$)/);
    }
  });

  // Guarantee: the runtime image runs the selected service as a non-root user in production mode.
  it('runs the selected service as non-root with APP_ENV=production', () => {
    const text = readFileSync(file, 'utf8');
    const runtime = text.slice(text.indexOf('AS runtime'));
    expect(runtime).toMatch(/^USER (?!root)\S+/m);
    expect(runtime).toMatch(/APP_ENV=production/);
    // The command itself (with the service's Node flags) is run in deploy/test/dockerfile.test.ts.
    expect(runtime).toMatch(/exec node .*services\/\$\{SERVICE\}\/dist\/main\.js/);
  });
});
