import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from '../../packages/config/src/index.ts';
import { DEFAULT_OPS_PORTS } from '../healthcheck.mjs';
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
    expect(fetch).toBeLessThan(at('build', /^COPY packages /m));
    expect(fetch).toBeLessThan(at('build', /^COPY services /m));
    expect(at('build', /^RUN pnpm install --offline/m)).toBeGreaterThan(at('build', /^COPY services /m));
  });

  // Guarantee: the runtime image holds the bundle and production dependencies only: no Prisma
  // CLI, no dev tools (tsx, vitest, turbo), no sources; it runs as `node`, which owns the media
  // folder and nothing else, listens for probes from outside, and has a healthcheck.
  it('keeps dev tools out of a non-root runtime with a healthcheck', () => {
    const runtime = stages.runtime ?? '';
    expect(runtime).toMatch(/^COPY --from=prune \/out\/ \/app\/$/m);
    expect(runtime).not.toMatch(/^COPY (packages|services|scripts)/m);
    expect(stages.prune).toMatch(/deploy --offline --prod/);
    expect(stages.prune).toMatch(/rm -rf prisma \.bin\/prisma/);
    expect(runtime).toMatch(/chown node:node \/app\/var\/media/);
    expect(runtime).toMatch(/MEDIA_DIR=\/app\/var\/media/);
    expect(runtime.search(/^USER node$/m)).toBeGreaterThan(runtime.search(/chown/));
    expect(runtime).toMatch(/^HEALTHCHECK .*healthcheck\.mjs/m);
    expect(runtime).toMatch(/OPS_HOST=0\.0\.0\.0/);
  });

  // Guarantee: the image runs a service with the Node flags its package.json asks for, as
  // `pnpm start` and the tests do: the prune stage's command writes them (run here against this
  // repository) and the runtime's command passes them to node (run here with sh).
  it('passes each service the Node flags of its package.json', () => {
    const write = (stages.prune ?? '').match(
      /node -e "(.+?)" \\\n\s+> "\/out\/services\/\$\{SERVICE\}\/node-flags"/,
    );
    if (!write?.[1]) throw new Error('the prune stage writes no node-flags file');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's shell variable, as written there
    const script = write[1].replaceAll('${SERVICE}', 'gateway').replaceAll('/app/', `${ROOT}/`);
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
