// Bundles the service in the current directory (src/main.ts → dist/main.js) for `node`.
// The service's own npm dependencies stay external (loaded from its node_modules at run time);
// workspace packages (@svc/*, which export TypeScript source) are compiled in together with the
// npm packages they use, so a service never needs to repeat its packages' dependencies.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies?: Record<string, string>;
};
const ownDependencies = Object.keys(manifest.dependencies ?? {}).filter((name) => !name.startsWith('@svc/'));

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
        b.onResolve({ filter: /^@svc\/[a-z-]+$/ }, (args) => ({
          path: path.join(root, 'packages', args.path.slice('@svc/'.length), 'src/index.ts'),
        }));
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
