import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Bus, connectBus, pullMessages } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DurableConsumer, STREAMS, SUBJECTS } from '../../packages/bus/src/catalog.ts';
import {
  committedPasswordVariables,
  committedUsers,
  consumersOf,
  LISTENS,
  NATS_SERVICES,
  type NatsService,
  OWNED_SUBJECTS,
  passwordVariable,
  permissionsOf,
  serverConfig,
} from './nats-users.ts';

const logger = createLogger('nats-users-test', { level: 'silent' });

/** The machine's server binary (Debian's `nats-server`, which .ci/run installs), as PrivateNats starts it. */
const NATS_SERVER = 'nats-server';

describe('deploy/k8s/nats/users.yaml', () => {
  // Guarantee: each service's NATS user allows exactly what the bus catalog says the service does
  // (its durable consumers, the subjects it owns, the announcements it listens to), so a consumer
  // added to the catalog without its permissions fails here, not in production.
  it('gives each service exactly the permissions the catalog implies', () => {
    const users = committedUsers();
    expect(users.map((u) => u.user).sort()).toEqual([...NATS_SERVICES, 'admin'].sort());
    for (const service of NATS_SERVICES)
      expect(users.find((u) => u.user === service)?.permissions, service).toEqual(permissionsOf(service));
    for (const user of users) {
      expect(user.password, user.user).toBe(`<< $${passwordVariable(user.user)} >>`);
      expect(committedPasswordVariables()[passwordVariable(user.user)]?.valueFrom.secretKeyRef.key).toBe(
        user.user,
      );
    }
  });

  // Guarantee: every subject of the streams (but the dead letters') is owned by exactly one service.
  it('gives every subject of the streams one owner', () => {
    const owned = Object.values(OWNED_SUBJECTS).flat().sort();
    const streamSubjects = Object.values(STREAMS)
      .flatMap((s) => s.subjects)
      .filter((s) => s !== 'dead.>')
      .sort();
    expect(owned).toEqual(streamSubjects);
  });
});

/** A nats-server of this test's own, configured with the committed users as the chart would. */
class AuthenticatedNats {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly url: string,
    readonly passwords: Record<string, string>,
  ) {}

  static async start(): Promise<AuthenticatedNats> {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-nats-users-'));
    const port = await freePort();
    const users = committedUsers();
    const passwords = Object.fromEntries(users.map((u) => [u.user, `password-of-${u.user}`]));
    const env = Object.fromEntries(users.map((u) => [passwordVariable(u.user), passwords[u.user]]));
    const file = path.join(dir, 'nats.conf');
    writeFileSync(file, serverConfig(users, path.join(dir, 'js'), port));
    const child = spawn(NATS_SERVER, ['-c', file], { env: { ...process.env, ...env }, stdio: 'ignore' });
    await waitForPort(port);
    return new AuthenticatedNats(child, dir, `nats://127.0.0.1:${port}`, passwords);
  }

  connectAs(service: string, pass = this.passwords[service] ?? ''): Promise<Bus> {
    return connectBus({
      url: this.url,
      prefix: '',
      name: service,
      logger,
      credentials: { user: service, pass },
    });
  }

  stop(): void {
    this.child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The permission violations the server reported to this connection. */
function violations(bus: Bus): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const status of bus.nc.status())
      if (status.type === 'error') seen.push(String((status as { error?: Error }).error?.message));
  })();
  return seen;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/** Creates the durable consumer and pulls from it for a moment, as the service's consume does. */
async function pullBriefly(bus: Bus, consumer: DurableConsumer<unknown>): Promise<void> {
  const messages = await pullMessages(bus, consumer, consumer.subject.settings, 1);
  const reading = (async () => {
    for await (const message of messages) message.nak();
  })();
  await settle();
  await messages.close();
  await reading;
}

/** A concrete subject under a pattern of the catalog (`post.>` → `post.probe`). */
const concrete = (pattern: string) => pattern.replace('>', 'probe').replace('*', 'probe');

describe('the NATS users, on a nats-server', () => {
  let nats: AuthenticatedNats;
  beforeAll(async () => {
    nats = await AuthenticatedNats.start();
  });
  afterAll(() => nats?.stop());

  // Guarantee: a message published by its owner reaches the consumer of another service, which
  // acknowledges it (the ack goes through the consumer's own subjects, not a shared inbox). It is
  // read by the service's own pull loop: a pull request left by a closed reader would hold it.
  it('carries a workspace.deleted from identity to accounts, acknowledged', { timeout: 40_000 }, async () => {
    const identity = await nats.connectAs('identity');
    const accounts = await nats.connectAs('accounts');
    try {
      const [consumer] = consumersOf('accounts').filter((c) => c.subject === SUBJECTS.workspaceDeleted);
      if (!consumer) throw new Error('accounts reads no workspace.deleted');
      // Read as the service reads (its pull loop, started first), until our message comes.
      const marker = JSON.stringify({ probe: Date.now() });
      const messages = await pullMessages(accounts, consumer, consumer.subject.settings, 1);
      const acknowledged = (async () => {
        for await (const message of messages) {
          expect(message.subject).toBe('workspace.deleted');
          const ours = message.string() === marker;
          expect(await message.ackAck()).toBe(true);
          if (ours) return true;
        }
        return false;
      })();
      await identity.js.publish(SUBJECTS.workspaceDeleted.name, marker);
      const timeout = setTimeout(() => void messages.close(), 15_000);
      try {
        expect(await acknowledged).toBe(true);
      } finally {
        clearTimeout(timeout);
        await messages.close();
      }
    } finally {
      await identity.close();
      await accounts.close();
    }
  });

  // Guarantee: with its own user, each service does everything it does at start and at work
  // without a single permission violation: it ensures the streams, creates and pulls from its
  // durable consumers, publishes on its subjects and dead letters, listens to its announcements.
  it.each(NATS_SERVICES)('lets %s do its work', async (service: NatsService) => {
    const bus = await nats.connectAs(service);
    const seen = violations(bus);
    try {
      for (const consumer of consumersOf(service)) {
        await pullBriefly(bus, consumer);
        await bus.js.publish(`dead.${consumer.durable}`, 'probe');
      }
      for (const subject of OWNED_SUBJECTS[service]) await bus.js.publish(concrete(subject), 'probe');
      for (const subject of LISTENS[service]) bus.nc.subscribe(subject);
      await bus.nc.flush();
      await settle();
      expect(seen).toEqual([]);
    } finally {
      await bus.close();
    }
  });

  // Guarantee: the forgeries and the eavesdropping of issue 25 are refused by the server: a service
  // cannot publish another's event or a Meta webhook, read another's subjects, replies or stream
  // contents, nor make itself a consumer; no connection without credentials.
  it('refuses what a service does not own', async () => {
    const inbox = await nats.connectAs('inbox');
    const seen = violations(inbox);
    try {
      inbox.nc.publish('workspace.deleted', '{}');
      inbox.nc.publish('provider.meta.webhook', '{}');
      inbox.nc.subscribe('jobs.>');
      inbox.nc.subscribe('_INBOX.>');
      inbox.nc.subscribe('_INBOX_publishing.>');
      inbox.nc.publish('$JS.API.STREAM.MSG.GET.JOBS', '{"seq":1}');
      inbox.nc.publish('$JS.API.CONSUMER.CREATE.EVENTS.spy', '{}');
      inbox.nc.publish('$JS.API.STREAM.DELETE.EVENTS', '');
      await inbox.nc.flush();
      await settle();
      const refused = seen.join('\n');
      for (const subject of [
        'workspace.deleted',
        'provider.meta.webhook',
        'jobs.>',
        '_INBOX.>',
        '_INBOX_publishing.>',
        '$JS.API.STREAM.MSG.GET.JOBS',
        '$JS.API.CONSUMER.CREATE.EVENTS.spy',
        '$JS.API.STREAM.DELETE.EVENTS',
      ])
        expect(refused, subject).toContain(subject);
      await expect(inbox.js.publish('workspace.deleted', '{}', { timeout: 1_000 })).rejects.toThrow();
      await expect(inbox.jsm.streams.getMessage('JOBS', { seq: 1 })).rejects.toThrow();
    } finally {
      await inbox.close();
    }
    const anonymous = { url: nats.url, prefix: '', name: 'anonymous', logger, credentials: {} };
    await expect(connectBus(anonymous)).rejects.toThrow();
    await expect(nats.connectAs('inbox', 'wrong')).rejects.toThrow();
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1', () => resolve(socket.end() && true));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server did not listen on ${port}`);
}
