import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  ACCOUNT_ANNOUNCEMENTS,
  CONSUMERS,
  type DurableConsumer,
  STREAMS,
  SUBJECTS,
  Subjects,
} from '../../packages/bus/src/catalog.ts';
import { K8S_DIR } from './render.ts';

/** The services that connect to NATS, each as its own user (its connectBus name). */
export const NATS_SERVICES = ['gateway', 'identity', 'accounts', 'publishing', 'inbox', 'webhooks'] as const;
export type NatsService = (typeof NATS_SERVICES)[number];

/**
 * The subjects each service owns: it alone publishes there (through its outbox, or, for the gateway,
 * directly). Every stream subject but the dead letters' belongs to exactly one service.
 */
export const OWNED_SUBJECTS: Record<NatsService, string[]> = {
  gateway: ['provider.>'],
  identity: ['workspace.>', 'key.>', 'embed.>'],
  accounts: ['account.>', 'accounts.>'],
  publishing: ['post.>', 'jobs.>', 'media.>'],
  inbox: ['message.>', 'comment.>'],
  webhooks: [],
};

const names = (subjects: readonly { name: string }[]) => subjects.map((s) => s.name);
const WORKSPACE_CACHE = names([SUBJECTS.workspaceUpdated, SUBJECTS.workspaceDeleted]);

/**
 * Plain subscriptions (not durable consumers): caches dropped on an owner's announcement
 * (LocalCache.dropOn, WorkspaceCache, the gateway's kept media files), the gateway's widget streams (embed/event-streams.ts) and
 * publishing's wait for a post to settle (settlement-watch.ts).
 */
export const LISTENS: Record<NatsService, string[]> = {
  gateway: [
    ...STREAMS.events.subjects,
    SUBJECTS.accountChanged.name,
    SUBJECTS.embedSessionEnded.name,
    SUBJECTS.mediaDeleted.name,
    SUBJECTS.mediaPurged.name,
    SUBJECTS.workspaceDeleted.name,
    SUBJECTS.workspaceUpdated.name,
  ],
  identity: [],
  accounts: [...WORKSPACE_CACHE],
  publishing: ['post.>', ...names(ACCOUNT_ANNOUNCEMENTS), ...WORKSPACE_CACHE],
  inbox: [...names(ACCOUNT_ANNOUNCEMENTS), ...WORKSPACE_CACHE],
  webhooks: [],
};

/** The catalog's durable consumers a service reads (its name is the durable's first word). */
export function consumersOf(service: string): DurableConsumer<unknown>[] {
  return Object.values(CONSUMERS).filter(
    (c) => c.durable.split('-')[0] === service,
  ) as DurableConsumer<unknown>[];
}

export interface Permissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/**
 * What a service may do on NATS, and nothing more: ensure the streams (every service creates or
 * updates them at start, connection.ts), run its own durable consumers (create, read, pull, ack,
 * dead-letter), publish on its own subjects, listen on what it listens to, and receive replies on
 * its own inboxes (`_INBOX_<service>`, credentials.ts). Production has no NATS_PREFIX.
 */
export function permissionsOf(service: NatsService): Permissions {
  const subjects = new Subjects('');
  const streams = (Object.keys(STREAMS) as (keyof typeof STREAMS)[]).map((key) => subjects.streamName(key));
  const consumers = consumersOf(service).flatMap((consumer) => {
    const stream = subjects.streamName(consumer.subject.stream);
    const durable = subjects.durable(consumer);
    return [
      `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
      `$JS.API.CONSUMER.CREATE.${stream}.${durable}`,
      `$JS.API.CONSUMER.CREATE.${stream}.${durable}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
      `$JS.ACK.${stream}.${durable}.>`,
      subjects.subject(`dead.${durable}`),
    ];
  });
  return {
    publish: {
      allow: [
        '$JS.API.INFO',
        ...streams.flatMap((s) => [
          `$JS.API.STREAM.INFO.${s}`,
          `$JS.API.STREAM.CREATE.${s}`,
          `$JS.API.STREAM.UPDATE.${s}`,
        ]),
        ...consumers,
        ...OWNED_SUBJECTS[service],
      ],
    },
    subscribe: { allow: [`_INBOX_${service}.>`, ...LISTENS[service]] },
  };
}

/** A user of the NATS Helm values: its password is an environment variable of the server's pod. */
export interface NatsUser {
  user: string;
  password: string;
  permissions?: Permissions;
}

/** The environment variable holding a user's password on the NATS pods (from Secret `nats-users`). */
export const passwordVariable = (user: string) => `NATS_PASSWORD_${user.toUpperCase()}`;

/** The users of deploy/k8s/nats/users.yaml (`config.merge.authorization.users`). */
export function committedUsers(): NatsUser[] {
  const values = parse(readFileSync(path.join(K8S_DIR, 'nats/users.yaml'), 'utf8'));
  return values?.config?.merge?.authorization?.users ?? [];
}

/** The `container.env` of deploy/k8s/nats/users.yaml: each password variable from the Secret. */
export function committedPasswordVariables(): Record<
  string,
  { valueFrom: { secretKeyRef: { key: string } } }
> {
  const values = parse(readFileSync(path.join(K8S_DIR, 'nats/users.yaml'), 'utf8'));
  return values?.container?.env ?? {};
}

/**
 * The chart writes `<< $NAME >>` unquoted into nats.conf, where `$NAME` is read from the server's
 * environment: the same text is written here for a nats-server started by the tests.
 */
export function serverConfig(users: NatsUser[], storeDir: string, port: number): string {
  const json = JSON.stringify({
    port,
    host: '127.0.0.1',
    jetstream: { store_dir: storeDir },
    authorization: { users },
  });
  return json.replace(/"<< (\$[A-Z_]+) >>"/g, '$1');
}
