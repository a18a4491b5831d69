import { Writable } from 'node:stream';
import { parseConfig } from '@svc/config';
import { identityConfigSchema } from '@svc/identity/config';
import { startIdentity } from '@svc/identity/service';
import { createLogger } from '@svc/logging';
import { createTestDatabase, uniquePrefix } from '@svc/testing';
import { gatewayConfigSchema } from '../src/config.ts';
import { startGateway } from '../src/service.ts';

/**
 * A real stack for one test file: a fresh database cloned from the migrated template, its own
 * Redis key prefix and NATS stream prefix, identity and one or more gateways in this process,
 * talking over real gRPC/HTTP. Every log line is captured so tests can assert on it.
 */
export interface Stack {
  databaseUrl: string;
  prefix: string;
  logs: Record<string, unknown>[];
  identity: Awaited<ReturnType<typeof startIdentity>>;
  gateway: Awaited<ReturnType<typeof startGateway>>;
  startGateway(env?: Record<string, string>): Promise<Awaited<ReturnType<typeof startGateway>>>;
  createPartner(slug?: string): Promise<{ partnerId: string; key: string }>;
  stop(): Promise<void>;
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const databaseUrl = await createTestDatabase();
  const prefix = uniquePrefix();
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const common = {
    APP_ENV: 'development',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `${prefix}:`,
    NATS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    ...env,
  };
  const identityConfig = parseConfig(identityConfigSchema(common), {
    ...common,
    IDENTITY_GRPC_ADDRESS: '127.0.0.1:0',
    OPS_PORT: '0',
  });
  const identity = await startIdentity(
    identityConfig,
    createLogger('identity', { destination, level: common.LOG_LEVEL }),
  );
  const gateways: Awaited<ReturnType<typeof startGateway>>[] = [];
  const launchGateway = async (extra: Record<string, string> = {}) => {
    const gatewayEnv = { ...common, PORT: '0', IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`, ...extra };
    const gateway = await startGateway(
      parseConfig(gatewayConfigSchema(gatewayEnv), gatewayEnv),
      createLogger('gateway', { destination, level: common.LOG_LEVEL }),
    );
    gateways.push(gateway);
    return gateway;
  };
  const gateway = await launchGateway();
  return {
    databaseUrl,
    prefix,
    logs,
    identity,
    gateway,
    startGateway: launchGateway,
    async createPartner(slug = uniquePrefix('p')) {
      const { createPartner } = await import('@svc/identity/admin');
      const result = await createPartner(identity.prisma, slug);
      return { partnerId: result.partner.id, key: result.key };
    },
    async stop() {
      for (const g of gateways) await g.stop();
      await identity.stop();
    },
  };
}

/** A small client for the gateway: JSON in, JSON out, status and headers kept. */
export function api(baseUrl: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}
