// Authors a migration from a schema change: `pnpm migration:new <service> <name>`.
// `prisma migrate dev` cannot run with the offline setup (its shadow database cannot be dropped
// while the adapter holds it), so we diff the schema as last committed against the working copy
// and write the SQL as a new migration folder. Apply it with `pnpm migrate`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const [service, name] = process.argv.slice(2);
if (!service || !name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: pnpm migration:new <service> <snake_case_name>');
  process.exit(2);
}
const serviceDir = path.resolve('services', service);
const schemaPath = path.join(serviceDir, 'prisma/schema.prisma');
if (!existsSync(schemaPath)) {
  console.error(`no Prisma schema at ${schemaPath}`);
  process.exit(2);
}

const committedSchema = gitShow(`HEAD:services/${service}/prisma/schema.prisma`);
const fromArgs =
  committedSchema === null ? ['--from-empty'] : ['--from-schema-datamodel', writeTemp(committedSchema)];
const diff = spawnSync(
  path.resolve('node_modules/.bin/tsx'),
  [
    path.resolve('scripts/prisma.ts'),
    'migrate',
    'diff',
    ...fromArgs,
    '--to-schema-datamodel',
    'prisma/schema.prisma',
    '--script',
  ],
  { cwd: serviceDir, encoding: 'utf8' },
);
if (diff.status !== 0) {
  console.error(diff.stderr);
  process.exit(1);
}
if (!diff.stdout.trim() || diff.stdout.includes('This is an empty migration')) {
  console.error('the schema has not changed since the last commit: nothing to write');
  process.exit(1);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const dir = path.join(serviceDir, 'prisma/migrations', `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'migration.sql'), diff.stdout);
const lock = path.join(serviceDir, 'prisma/migrations/migration_lock.toml');
if (!existsSync(lock)) writeFileSync(lock, 'provider = "postgresql"\n');
console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql`);

function gitShow(ref: string): string | null {
  try {
    return execFileSync('git', ['show', ref], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

function writeTemp(content: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'schema-')), 'schema.prisma');
  writeFileSync(file, content);
  return file;
}
