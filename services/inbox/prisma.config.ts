import { defineConfig } from 'prisma/config';
import { migrationAdapter } from '../../scripts/lib/prisma-adapter.ts';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: 'prisma/schema.prisma',
  adapter: async () => migrationAdapter('inbox'),
});
