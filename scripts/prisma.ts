// Runs the Prisma CLI offline for the service in the current directory.
// Prisma 6.19 downloads native engines on every call unless these two variables name an existing
// file; with `engine: "js"` in prisma.config.ts it then uses its bundled WASM schema engine and
// never loads them (see ../shared/notes/environment.md). Usage: tsx ../../scripts/prisma.ts <args>
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { databaseUrl } from './lib/database.ts';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const cli = require.resolve('prisma/build/index.js');
const anyExistingFile = process.execPath;

const result = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl(),
    PRISMA_QUERY_ENGINE_LIBRARY: anyExistingFile,
    PRISMA_SCHEMA_ENGINE_BINARY: anyExistingFile,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
