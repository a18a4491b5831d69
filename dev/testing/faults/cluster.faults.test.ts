import { connectBus } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PrivateNatsCluster } from '../src/private-servers.ts';
import { type FaultRow, printTable, survive } from './fault-runs.ts';
import { type FaultSystem, startFaultSystem } from './fault-system.ts';

/**
 * The fault suite's system (see system.faults.test.ts) on a local 3-node JetStream cluster, every
 * stream kept on all three nodes (NATS_STREAM_REPLICAS=3) and every service given the three
 * nodes' URLs. One node is killed (kill -9) in the middle of a burst, the leader of the busiest
 * stream (EVENTS), and stays down while the checks run: the two left elect new leaders, the
 * clients move to them, and nothing is lost or done twice. The node is then started again and
 * catches up.
 */
const REPLICAS = 3;
let cluster: PrivateNatsCluster;
let fs: FaultSystem;
const rows: FaultRow[] = [];

beforeAll(async () => {
  cluster = await PrivateNatsCluster.start(REPLICAS);
  fs = await startFaultSystem({ natsUrl: cluster.url, env: { NATS_STREAM_REPLICAS: String(REPLICAS) } });
}, 300_000);

afterAll(async () => {
  printTable(rows);
  await fs?.stop();
  await cluster?.stop();
}, 120_000);

/** The node leading the system's EVENTS stream, as JetStream reports it (with its two copies). */
async function eventsLeader(): Promise<string> {
  const logger = createLogger('faults', { level: 'silent' });
  const { prefix } = fs.system;
  const bus = await connectBus({
    url: cluster.url,
    prefix,
    name: 'faults-observer',
    logger,
    replicas: REPLICAS,
  });
  try {
    const info = await bus.jsm.streams.info(bus.subjects.streamName('events'));
    expect(info.config.num_replicas).toBe(REPLICAS);
    expect(info.cluster?.replicas?.filter((r) => r.current)).toHaveLength(REPLICAS - 1);
    if (!info.cluster?.leader) throw new Error('the EVENTS stream has no leader');
    return info.cluster.leader;
  } finally {
    await bus.close();
  }
}

// Guarantee: losing one node of a 3-node JetStream cluster under load loses nothing, does
// nothing twice, answers no 5xx but 503, and the system catches up within 30 s with the node
// still down; the node then rejoins.
it('survives kill -9 of the EVENTS stream leader of a 3-node JetStream cluster', async () => {
  const leader = cluster.node(await eventsLeader());
  await survive(fs.system, fs.world, rows, `kill -9 NATS node (${leader.serverName}, leader)`, () =>
    leader.kill(),
  );
  await leader.restart();
  await cluster.healthy();
}, 120_000);
