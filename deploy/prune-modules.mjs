// Run in the image's prune stage on the service's deployed node_modules (pnpm's layout: top-level
// links into .pnpm/<package>/node_modules/<name>, each package's dependencies linked beside it):
// removes the build-time packages a service lists among its dependencies, then every package of
// .pnpm that nothing left depends on, so the runtime carries none of their dependencies either:
// - `prisma`, the CLI and its engines: the code uses the generated client only; migrations run
//   from the migrate image (deploy/migrate);
// - `@scalar/api-reference`, the API docs viewer: the gateway serves one file of it, its standalone
//   bundle, which the prune stage keeps on its own (a few hundred packages less);
// - the workspace packages (`@svc/*`): scripts/bundle.ts compiles them, with what they use, into
//   dist/main.js, so neither they nor their own dependencies are loaded at run time.
// Usage: node deploy/prune-modules.mjs <node_modules>
import { existsSync, lstatSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';

export const BUILD_ONLY = ['prisma', '@scalar/api-reference', '@svc'];

/** The entries of a node_modules folder, scoped packages as `@scope/name`. */
function entries(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith('.')) return [];
    if (name.startsWith('@')) return readdirSync(path.join(dir, name)).map((inner) => `${name}/${inner}`);
    return [name];
  });
}

/** The .pnpm package folder a link leads to (`.pnpm/<id>`), or undefined outside the store. */
function storeEntry(store, link) {
  if (!existsSync(link)) return undefined;
  const relative = path.relative(store, realpathSync(link));
  return relative.startsWith('..') ? undefined : relative.split(path.sep)[0];
}

/** Removes `names` from `modules` and whatever of .pnpm only they needed; answers what went. */
export function pruneModules(modules, names = BUILD_ONLY) {
  const store = realpathSync(path.join(modules, '.pnpm'));
  for (const name of names) rmSync(path.join(modules, name), { recursive: true, force: true });
  const kept = new Set();
  const visit = (id) => {
    if (!id || kept.has(id)) return;
    kept.add(id);
    const inner = path.join(store, id, 'node_modules');
    for (const name of entries(inner)) visit(storeEntry(store, path.join(inner, name)));
  };
  for (const name of entries(modules)) visit(storeEntry(store, path.join(modules, name)));
  const removed = readdirSync(store).filter(
    (id) => id !== 'node_modules' && !id.startsWith('lock') && !kept.has(id),
  );
  for (const id of removed) rmSync(path.join(store, id), { recursive: true, force: true });
  for (const dir of [path.join(store, 'node_modules'), path.join(modules, '.bin')])
    for (const name of entries(dir)) {
      const link = path.join(dir, name);
      if (lstatSync(link).isSymbolicLink() && !existsSync(link)) rmSync(link);
    }
  return removed;
}

if (process.argv[1]?.endsWith('prune-modules.mjs')) {
  const removed = pruneModules(process.argv[2] ?? 'node_modules');
  console.log(`pruned ${removed.length} packages no runtime code needs`);
}
