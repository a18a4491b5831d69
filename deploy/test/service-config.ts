import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { type Env, parseConfig, z } from '../../packages/config/src/index.ts';
import { accountsConfigSchema } from '../../services/accounts/src/config.ts';
import { gatewayConfigSchema } from '../../services/gateway/src/config.ts';
import { identityConfigSchema } from '../../services/identity/src/config.ts';
import { inboxConfigSchema } from '../../services/inbox/src/config.ts';
import { publishingConfigSchema } from '../../services/publishing/src/config.ts';
import { webhooksConfigSchema } from '../../services/webhooks/src/config.ts';
import { NATS_SERVICES, passwordVariable } from './nats-users.ts';
import { find, K8S_DIR, type K8sObject } from './render.ts';

type Schema = z.ZodObject<z.ZodRawShape>;

/**
 * Each container's config schema, by container name (the service it runs). The migration Job runs
 * `pnpm migrate`, which reads DATABASE_URL only (scripts/lib/database.ts).
 */
export const CONFIG_SCHEMAS: Record<string, (env: Env) => Schema> = {
  gateway: gatewayConfigSchema,
  identity: identityConfigSchema,
  accounts: accountsConfigSchema,
  publishing: publishingConfigSchema,
  inbox: inboxConfigSchema,
  webhooks: webhooksConfigSchema,
  migrate: () => z.object({ DATABASE_URL: z.url() }),
};

/** What a container's environment holds, and which variables come from a Secret. */
export interface ContainerEnv {
  values: Record<string, string>;
  fromSecret: Set<string>;
}

// biome-ignore lint/suspicious/noExplicitAny: a container as rendered
type Container = any;

/** A Deployment's or Job's containers. */
export const containersOf = (object: K8sObject): Container[] => object.spec?.template?.spec?.containers ?? [];

/**
 * A container's variables: its ConfigMaps' keys (envFrom, or one key by configMapKeyRef), its literal
 * values and its Secret references, those read from `secret` (the rendered Secret, or stand-ins in
 * production).
 */
export function containerEnv(
  objects: K8sObject[],
  container: Container,
  secret: Record<string, string>,
): ContainerEnv {
  const values: Record<string, string> = {};
  const fromSecret = new Set<string>();
  for (const source of container.envFrom ?? []) {
    if (!source.configMapRef) throw new Error(`${container.name}: only ConfigMaps are read whole (envFrom)`);
    Object.assign(values, find(objects, 'ConfigMap', source.configMapRef.name).data);
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    const configKey = variable.valueFrom?.configMapKeyRef;
    if (ref) {
      fromSecret.add(variable.name);
      values[variable.name] = secret[ref.key] ?? '';
    } else if (configKey)
      values[variable.name] = find(objects, 'ConfigMap', configKey.name).data?.[configKey.key] ?? '';
    else values[variable.name] = variable.value;
  }
  return { values, fromSecret };
}

/**
 * The development Secret's values, which production checks use as well-formed stand-ins, with the
 * keys only production's Secret has: each service's NATS password (deploy/k8s/README.md).
 */
export function standInSecrets(): Record<string, string> {
  const file = path.join(K8S_DIR, 'overlays/development/development-secret.yaml');
  const development = (parse(readFileSync(file, 'utf8')) as { stringData: Record<string, string> })
    .stringData;
  const nats = NATS_SERVICES.map((service) => [
    passwordVariable(service),
    `stand-in-nats-password-${service}`,
  ]);
  return { ...development, ...Object.fromEntries(nats) };
}

/** The variables a manifest sets that the service's schema does not read (typos, stale names). */
export function unknownVariables(service: string, env: ContainerEnv): string[] {
  const schema = schemaOf(service, env);
  return Object.keys(env.values).filter((name) => !(name in schema.shape));
}

/** The variables the schema requires in this mode (no default): production's secrets. */
export function requiredVariables(service: string, env: ContainerEnv): string[] {
  const { shape } = schemaOf(service, env);
  return Object.keys(shape).filter((name) => !(shape[name] as z.ZodType).safeParse(undefined).success);
}

/** Parses the container's environment as the service will at start; throws naming what is bad. */
export function parseContainerEnv(service: string, env: ContainerEnv): void {
  parseConfig(schemaOf(service, env), env.values);
}

function schemaOf(service: string, env: ContainerEnv): Schema {
  const make = CONFIG_SCHEMAS[service];
  if (!make) throw new Error(`no config schema known for container ${service}`);
  return make(env.values);
}
