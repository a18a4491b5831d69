import { PrismaPg } from '@prisma/adapter-pg';
import { databaseUrl } from './database.ts';

// The migration adapter is given as an object, not a connection string: Prisma's shadow-database
// helper overrides `database` in it. Each service keeps its tables in its own schema.
export function migrationAdapter(schema: string): PrismaPg {
  const url = new URL(databaseUrl());
  return new PrismaPg(
    {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
      // Unqualified names in migrations and the migrations table itself land in the schema.
      options: `-c search_path=${schema}`,
    },
    { schema },
  );
}
