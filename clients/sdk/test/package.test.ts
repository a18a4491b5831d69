import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The SDK as a partner's project receives it: `pnpm pack` (tsc into dist/, then the tarball) and the
 * tarball unpacked into a project outside the monorepo, beside its one dependency. What is packed
 * is built JavaScript with its types, and nothing of the workspace.
 */
const run = promisify(execFile);
const SDK = path.resolve(import.meta.dirname, '..');
const fromSdk = createRequire(path.join(SDK, 'package.json'));
const packageDir = (name: string) => path.dirname(fromSdk.resolve(`${name}/package.json`));

let project: string;
let api: Server;
let apiUrl: string;

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'svc-sdk-consumer-'));
  // The build alone: `prepack` would also regenerate src/generated/, which test files running
  // beside this one are reading.
  await run('pnpm', ['run', 'build'], { cwd: SDK });
  await run('pnpm', ['--config.ignore-scripts=true', 'pack', '--pack-destination', project], { cwd: SDK });
  const tarball = (await readdir(project)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error('pnpm pack wrote no tarball');
  const modules = path.join(project, 'node_modules');
  await mkdir(path.join(modules, '@svc'), { recursive: true });
  await mkdir(path.join(modules, '@types'), { recursive: true });
  await run('tar', ['-xzf', path.join(project, tarball), '-C', path.join(modules, '@svc')]);
  await rename(path.join(modules, '@svc', 'package'), path.join(modules, '@svc', 'sdk'));
  await symlink(packageDir('openapi-fetch'), path.join(modules, 'openapi-fetch'));
  await symlink(packageDir('tus-js-client'), path.join(modules, 'tus-js-client'));
  await symlink(packageDir('@types/node'), path.join(modules, '@types', 'node'));
  await writeFile(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true },
      include: ['*.ts'],
    }),
  );
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  // A stand-in for the API that answers every call as the rate limit does.
  api = createServer((_request, response) => {
    response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    response.end(JSON.stringify({ error: { code: 'rate_limited', message: 'Too many requests.' } }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
}, 120_000);
afterAll(async () => {
  api?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

/** Type-checks the project's .ts files with the workspace's TypeScript; resolves to its output. */
async function typecheck(): Promise<{ ok: boolean; output: string }> {
  const tsc = fromSdk.resolve('typescript/bin/tsc');
  try {
    await run(process.execPath, [tsc, '--noEmit', '-p', project]);
    return { ok: true, output: '' };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout) };
  }
}

describe('the packed SDK', () => {
  // Guarantee: the tarball holds the built JavaScript and its declarations, and its manifest
  // points at them (not at the TypeScript sources the monorepo uses).
  it('holds dist/ with types, exported as the entry', async () => {
    const manifest = fromSdk(path.join(project, 'node_modules/@svc/sdk/package.json')) as {
      exports: Record<string, { types: string; default: string }>;
      dependencies: Record<string, string>;
    };
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch', 'tus-js-client']);
    const files = await readdir(path.join(project, 'node_modules/@svc/sdk'), { recursive: true });
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'README.md']));
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  });

  // Guarantee: Node runs the packed client: a call goes out and a refusal comes back as ApiError
  // with its code and Retry-After.
  it('runs on Node outside the monorepo', async () => {
    const script = path.join(project, 'call.mjs');
    await writeFile(
      script,
      `import { ApiError, createClient } from '@svc/sdk';
const api = createClient({ baseUrl: process.argv[2], apiKey: 'svc_test_key' });
try {
  await api.getPost({ params: { path: { id: 'post_1' } } });
} catch (error) {
  console.log(JSON.stringify({ api: error instanceof ApiError, code: error.code, retryAfter: error.retryAfter, status: error.status }));
}
`,
    );
    const { stdout } = await run(process.execPath, [script, apiUrl], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ api: true, code: 'rate_limited', retryAfter: 7, status: 429 });
  });

  // Guarantee: TypeScript (NodeNext resolution, as a partner's project uses) types every call
  // from the packed declarations: a right call compiles, a wrong path parameter does not.
  it('types its calls for a TypeScript project', async () => {
    const right = path.join(project, 'right.ts');
    await writeFile(
      right,
      `import { createClient, verifyWebhook } from '@svc/sdk';
const api = createClient({ baseUrl: 'https://api.example.com', apiKey: 'svc_test_key' });
export const post: Promise<{ id: string; caption: string | null }> = api.getPost({ params: { path: { id: 'post_1' } } });
export const verify = verifyWebhook;
`,
    );
    expect(await typecheck()).toEqual({ ok: true, output: '' });
    await writeFile(
      path.join(project, 'wrong.ts'),
      `import { createClient } from '@svc/sdk';
const api = createClient({ baseUrl: 'https://api.example.com', apiKey: 'svc_test_key' });
export const post = api.getPost({ params: { path: { post: 'post_1' } } });
`,
    );
    const wrong = await typecheck();
    expect(wrong.ok).toBe(false);
    const errors = wrong.output.split('\n').filter((line) => line.includes('error TS'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(
      "wrong.ts(3,53): error TS2353: Object literal may only specify known properties, and 'post'",
    );
  });
});
