// The one default for where the system's database lives, shared by every script.
const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/social';

export function databaseUrl(): string {
  return process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
}
