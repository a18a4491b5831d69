// Runs the Prisma CLI offline for the service in the current directory (see lib/prisma-cli.ts).
// Usage: tsx ../../scripts/prisma.ts <args>

import { databaseUrl } from './lib/database.ts';
import { startPrismaCli } from './lib/prisma-cli.ts';

const child = startPrismaCli(process.cwd(), process.argv.slice(2), databaseUrl(), 'inherit');
child.on('exit', (code) => process.exit(code ?? 1));
