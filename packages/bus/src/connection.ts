import {
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@svc/logging';
import { STREAMS, type StreamKey, Subjects } from './catalog.ts';
import { inboxPrefixFor, type NatsCredentials, natsCredentials } from './credentials.ts';

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  close(): Promise<void>;
}

const DUPLICATE_WINDOW_NS = 10 * 60 * 1e9; // Nats-Msg-Id de-duplication window: 10 minutes

export async function connectBus(options: {
  /** One server, or several comma-separated (a cluster's nodes): the client fails over between them. */
  url: string;
  prefix: string;
  name: string;
  logger: Logger;
  /** Copies of each stream the JetStream cluster keeps (3 on a 3-node cluster); 1 on one server. */
  replicas?: number;
  /** Who the client is to NATS; by default the NATS_* credentials of the environment, if any. */
  credentials?: NatsCredentials;
}): Promise<Bus> {
  const credentials = options.credentials ?? natsCredentials(process.env);
  const nc = await connect({
    servers: serverList(options.url),
    name: options.name,
    ...credentials,
    inboxPrefix: inboxPrefixFor(options.name, credentials),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Else every request (each JetStream publish and ack) builds two Errors with stack traces up
    // front in case it fails, a measurable share of a busy worker's CPU. Failures are still
    // errors; they only lack the caller's async stack, and ours are logged with their context.
    noAsyncTraces: true,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect')
        options.logger.warn({ nats: status.type }, 'NATS connection');
    }
  })();
  const jsm = await jetstreamManager(nc);
  const subjects = new Subjects(options.prefix);
  const replicas = options.replicas ?? 1;
  for (const key of Object.keys(STREAMS) as StreamKey[]) await ensureStream(jsm, subjects, key, replicas);
  return {
    nc,
    js: jetstream(nc),
    jsm,
    subjects,
    close: () => nc.drain(),
  };
}

async function ensureStream(
  jsm: JetStreamManager,
  subjects: Subjects,
  key: StreamKey,
  replicas: number,
): Promise<void> {
  const config = {
    name: subjects.streamName(key),
    subjects: subjects.streamSubjects(key),
    retention: 'workQueue' in STREAMS[key] ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    duplicate_window: DUPLICATE_WINDOW_NS,
    max_age: 7 * 24 * 3600 * 1e9,
    num_replicas: replicas,
  };
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch {
    await jsm.streams.add(config);
  }
}

/** `nats://a:4222,nats://b:4222` → each server; the client tries them in turn and reconnects to another. */
function serverList(url: string): string[] {
  return url
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);
}
