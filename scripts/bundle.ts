// Bundles the service in the current directory (src/main.ts → dist/main.js) for `node`.
// The service's own npm dependencies stay external (loaded from its node_modules at run time);
// workspace packages (@svc/*, which export TypeScript source) are compiled in together with the
// npm packages they use, so a service never needs to repeat its packages' dependencies.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies?: Record<string, string>;
};
const ownDependencies = Object.keys(manifest.dependencies ?? {}).filter((name) => !name.startsWith('@svc/'));
/** Where shipped code may come from: the shared kit and the clients, never dev/ (test tooling, the sandbox). */
const SHIPPED_FOLDERS = ['packages', 'clients'];

function workspaceSource(name: string): string {
  const folder = name.slice('@svc/'.length);
  const found = SHIPPED_FOLDERS.map((dir) => path.join(root, dir, folder, 'src/index.ts')).find(existsSync);
  if (!found) throw new Error(`${name} is in neither packages/ nor clients/: a bundle ships only those`);
  return found;
}

await build({
  entryPoints: [path.resolve('src/main.ts')],
  outfile: path.resolve('dist/main.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  sourcemap: true,
  external: ownDependencies.flatMap((name) => [name, `${name}/*`]),
  plugins: [
    {
      name: 'workspace-packages-from-source',
      setup(b) {
        b.onResolve({ filter: /^@svc\/[a-z-]+$/ }, (args) => ({ path: workspaceSource(args.path) }));
      },
    },
  ],
  // Bundled CommonJS dependencies still call require(). Under a name of its own: bundled code
  // may import createRequire itself, and two imports of one name do not parse.
  banner: {
    js: "import { createRequire as createBundleRequire } from 'node:module'; const require = createBundleRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
