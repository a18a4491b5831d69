import { describe, expect, it } from 'vitest';
import { appEnv, baseConfigSchema, envBoolean, envSecret, parseConfig, z } from './index.ts';

describe('config', () => {
  // Guarantee: "false" in the environment means false (z.coerce.boolean would read it as true).
  it('reads booleans as words, not as truthy strings', () => {
    const schema = z.object({ FLAG: envBoolean(true) });
    expect(parseConfig(schema, { FLAG: 'false' }).FLAG).toBe(false);
    expect(parseConfig(schema, { FLAG: '1' }).FLAG).toBe(true);
    expect(parseConfig(schema, {}).FLAG).toBe(true);
    expect(() => parseConfig(schema, { FLAG: 'maybe' })).toThrow(/FLAG/);
  });

  // Guarantee: production never silently runs on a built-in secret.
  it('requires secrets in production and defaults them in development', () => {
    const make = (env: Record<string, string>) =>
      z.object({ APP_SECRET: envSecret(appEnv(env), 'development-only-secret') });
    expect(() => parseConfig(make({}), {})).toThrow('invalid configuration: APP_SECRET is not set');
    expect(parseConfig(make({ APP_ENV: 'development' }), {}).APP_SECRET).toBe('development-only-secret');
  });

  // Guarantee: the default mode is production; development must be asked for.
  it('defaults to production mode', () => {
    expect(appEnv({})).toBe('production');
    expect(appEnv({ APP_ENV: 'development' })).toBe('development');
    expect(parseConfig(baseConfigSchema('production'), {}).APP_ENV).toBe('production');
  });

  it('names every bad variable in one line', () => {
    expect(() =>
      parseConfig(baseConfigSchema('production'), { DATABASE_URL: 'nope', NATS_PREFIX: 'a-b' }),
    ).toThrow(/DATABASE_URL .*; NATS_PREFIX/);
  });
});
