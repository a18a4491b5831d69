import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from '../../packages/config/src/index.ts';
import { DEFAULT_OPS_PORTS } from '../healthcheck.mjs';
import { pruneModules } from '../prune-modules.mjs';
import { CONFIG_SCHEMAS } from './service-config.ts';

/**
 * The image recipe's properties, checked on its text: no Docker engine runs on this machine (the
 * client alone is installed), so `docker build` cannot be run here, and hadolint is not available.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const text = readFileSync(path.resolve(import.meta.dirname, '../Dockerfile'), 'utf8');
const stages = Object.fromEntries(
  text
    .split(/^FROM /m)
    .slice(1)
    .map((stage) => [stage.split('\n')[0]?.split(' AS ')[1]?.trim(), stage]),
);
const at = (stage: string, pattern: RegExp) => (stages[stage] ?? '').search(pattern);

describe('deploy/Dockerfile', () => {
  // Guarantee: dependencies are downloaded in a layer that depends on the lockfile only, so a
  // source change does not download every package again.
  it('fetches dependencies from the lockfile before copying sources', () => {
    const fetch = at('build', /^RUN pnpm fetch/m);
    expect(at('build', /^COPY pnpm-lock\.yaml/m)).toBeGreaterThan(-1);
    expect(fetch).toBeGreaterThan(at('build', /^COPY pnpm-lock\.yaml/m));
    // Every workspace folder (pnpm-workspace.yaml) the install links, bench aside (not in the image).
    for (const folder of ['packages', 'services', 'clients', 'dev']) {
      const copy = at('build', new RegExp(`^COPY ${folder} `, 'm'));
      expect(copy, folder).toBeGreaterThan(fetch);
      expect(at('build', /^RUN pnpm install --offline/m), folder).toBeGreaterThan(copy);
    }
  });

  // Guarantee: the runtime image holds the bundle and production dependencies only: no Prisma
  // CLI, no docs viewer beyond its one served file, no workspace sources, no dev tools (tsx,
  // vitest, turbo); it runs as `node`, which owns the media folder and nothing else, listens for
  // probes from outside, and has a healthcheck.
  it('keeps dev tools out of a non-root runtime with a healthcheck', () => {
    const runtime = stages.runtime ?? '';
    expect(runtime).toMatch(/^COPY --from=prune \/out\/ \/app\/$/m);
    expect(runtime).not.toMatch(/^COPY (packages|services|clients|dev|scripts)/m);
    expect(stages.prune).toMatch(/deploy --offline --prod/);
    expect(stages.prune).toMatch(
      /node deploy\/prune-modules\.mjs "\/out\/services\/\$\{SERVICE\}\/node_modules"/,
    );
    expect(stages.prune).toMatch(/cp "\$viewer\/dist\/browser\/standalone\.js"/);
    expect(stages.prune).not.toMatch(/rm -rf .*prisma/);
    expect(runtime).toMatch(/chown node:node \/app\/var\/media/);
    expect(runtime).toMatch(/MEDIA_DIR=\/app\/var\/media/);
    expect(runtime.search(/^USER node$/m)).toBeGreaterThan(runtime.search(/chown/));
    expect(runtime).toMatch(/^HEALTHCHECK .*healthcheck\.mjs/m);
    expect(runtime).toMatch(/OPS_HOST=0\.0\.0\.0/);
  });

  // Guarantee: the base is one exact Node 24 release (a rebuild gets the same runtime), the images
  // say what they are (OCI labels) and which ports they use (EXPOSE).
  it('pins Node 24, labels the images and exposes their ports', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:24\.\d+\.\d+-[a-z]+-slim$/m);
    for (const name of ['runtime', 'migrate']) {
      const stage = stages[name] ?? '';
      for (const label of ['title', 'description', 'source', 'version', 'revision'])
        expect(stage, `${name}: ${label}`).toContain(`org.opencontainers.image.${label}=`);
    }
    const exposed: string[] = (stages.runtime ?? '').match(/^EXPOSE (.+)$/m)?.[1]?.split(' ') ?? [];
    const covers = (port: number) =>
      exposed.some((entry) => {
        const [from = '', to = from] = entry.split('-');
        return port >= Number(from) && port <= Number(to);
      });
    for (const port of [8080, 8090, ...Object.values(DEFAULT_OPS_PORTS), 50051, 50055])
      expect(covers(port), String(port)).toBe(true);
  });

  // Guarantee: the migrate image is slim: built from the Node base, not from the build stage, with
  // the Prisma CLI, adapter and pg at the workspace's own versions, and Node running the TypeScript
  // migration script itself (no tsx, no pnpm).
  it('builds a slim migrate image at the workspace versions', () => {
    const migrate = stages.migrate ?? '';
    expect(text).toMatch(/^FROM \$\{NODE_IMAGE\} AS migrate$/m);
    expect(migrate).not.toMatch(/--from=build/);
    expect(migrate).toMatch(/^CMD \["node", "scripts\/migrate\.ts"\]$/m);
    expect(stages['migrate-modules']).toMatch(/npm ci --omit=dev --ignore-scripts/);
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'deploy/migrate/package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'deploy/migrate/package-lock.json'), 'utf8'));
    for (const [name, version] of Object.entries(manifest.dependencies)) {
      const installed = JSON.parse(
        readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
      );
      expect(version, name).toBe(installed.version);
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(installed.version);
    }
  });

  // Guarantee: pruning takes a build-only package out with every package only it needed, and
  // keeps what a remaining package still uses.
  it('prunes build-only packages and what only they needed', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-prune-'));
    try {
      const modules = path.join(dir, 'node_modules');
      const pkg = (id: string, name: string, deps: [string, string][] = []) => {
        const inner = path.join(modules, '.pnpm', id, 'node_modules');
        mkdirSync(path.join(inner, name), { recursive: true });
        writeFileSync(path.join(inner, name, 'package.json'), '{}');
        for (const [depId, depName] of deps) {
          mkdirSync(path.dirname(path.join(inner, depName)), { recursive: true });
          symlinkSync(path.join('..', '..', depId, 'node_modules', depName), path.join(inner, depName));
        }
      };
      const link = (id: string, name: string) => {
        mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
        symlinkSync(path.join('.pnpm', id, 'node_modules', name), path.join(modules, name));
      };
      pkg('shared@1', 'shared');
      pkg('engines@1', '@prisma/engines');
      pkg('prisma@6', 'prisma', [
        ['engines@1', '@prisma/engines'],
        ['shared@1', 'shared'],
      ]);
      pkg('fastify@5', 'fastify', [['shared@1', 'shared']]);
      link('prisma@6', 'prisma');
      link('fastify@5', 'fastify');
      expect(pruneModules(modules).sort()).toEqual(['engines@1', 'prisma@6']);
      expect(readdirSync(path.join(modules, '.pnpm')).sort()).toEqual(['fastify@5', 'shared@1']);
      expect(existsSync(path.join(modules, 'fastify/package.json'))).toBe(true);
      expect(existsSync(path.join(modules, 'prisma'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Guarantee: the image runs a service with the Node flags its package.json asks for, as
  // `pnpm start` and the tests do: the prune stage's command writes them (run here against this
  // repository) and the runtime's command passes them to node (run here with sh).
  it('passes each service the Node flags of its package.json', () => {
    const write = (stages.prune ?? '').match(
      /node -e "(.+?)" \\\n\s+> "\/out\/services\/\$\{SERVICE\}\/node-flags"/,
    );
    if (!write?.[1]) throw new Error('the prune stage writes no node-flags file');
    // The Dockerfile's build arguments, as a build of the gateway sets them.
    const args: Record<string, string> = { SERVICE: 'gateway', SERVICE_DIR: 'services/gateway' };
    const script = write[1]
      .replace(/\$\{(\w+)\}/g, (variable: string, name: string) => args[name] ?? variable)
      .replaceAll('/app/', `${ROOT}/`);
    const flags = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'services/gateway/package.json'), 'utf8'));
    expect(manifest.nodeFlags.length).toBeGreaterThan(0);
    expect(flags).toBe(manifest.nodeFlags.join(' '));

    const cmd = (stages.runtime ?? '').match(/^CMD (\[.+\])$/m)?.[1];
    if (!cmd) throw new Error('the runtime has no CMD');
    const [shell, flag, command] = JSON.parse(cmd) as string[];
    const app = mkdtempSync(path.join(tmpdir(), 'svc-image-'));
    try {
      mkdirSync(path.join(app, 'services/gateway/dist'), { recursive: true });
      writeFileSync(path.join(app, 'services/gateway/node-flags'), flags);
      writeFileSync(
        path.join(app, 'services/gateway/dist/main.js'),
        'process.stdout.write(JSON.stringify(process.execArgv))',
      );
      const execArgv = execFileSync(shell ?? '', [flag ?? '', command ?? ''], {
        cwd: app,
        env: { PATH: process.env.PATH, SERVICE: 'gateway' },
        encoding: 'utf8',
      });
      expect(JSON.parse(execArgv)).toEqual(manifest.nodeFlags);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  // Guarantee: the healthcheck asks each service on the port it really listens on by default.
  it('knows every service ops port default', () => {
    for (const [service, port] of Object.entries(DEFAULT_OPS_PORTS)) {
      const make = CONFIG_SCHEMAS[service];
      if (!make) throw new Error(`no config schema for ${service}`);
      const opsPort = make({ APP_ENV: 'development' }).shape.OPS_PORT as z.ZodType;
      expect(opsPort.parse(undefined), service).toBe(port);
    }
    expect(Object.keys(DEFAULT_OPS_PORTS).sort()).toEqual(
      Object.keys(CONFIG_SCHEMAS)
        .filter((s) => s !== 'migrate')
        .sort(),
    );
  });
});
