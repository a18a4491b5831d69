import { describe, expect, it } from 'vitest';
import {
  CLIENT,
  namespaceLabelsOf,
  natsReleasePods,
  OUTSIDE,
  PUBLIC_OUTSIDE,
  podsOf,
  servicesOf,
  surroundings,
} from './cluster-world.ts';
import { Cluster, type Endpoint, type NetworkPolicy, type Protocol } from './network-policy.ts';
import { type K8sObject, named, render } from './render.ts';
import { containerEnv, standInSecrets } from './service-config.ts';

/**
 * The deployment's network behaviour: from the rendered NetworkPolicies of each overlay (and, in
 * production, of deploy/k8s/nats), which pod may open a connection to which peer on which port,
 * computed by the evaluator of network-policy.ts over every pair and port of the world of
 * cluster-world.ts. The matrix must hold exactly what the system needs and nothing else:
 *
 * - every pod → DNS; each service → the NATS, Postgres, Redis and S3 its settings name, and the gRPC
 *   services its *_GRPC_URL settings name (derived from the rendered environment, so a new setting
 *   without its path fails here);
 * - the roles that call out → public addresses on the ports they use (INTERNET below);
 * - anything outside the namespace → the gateway's public port; Prometheus → every ops port; KEDA
 *   and Prometheus → NATS monitoring; NATS nodes → each other's route port;
 * - nothing else: no other way in, no private or metadata address, no other namespace's NATS.
 */

/** Public destinations per role, and why. */
const INTERNET: Record<string, 'any' | number[]> = {
  // Meta's Graph API (OAuth, token refresh, permissions).
  accounts: [443],
  // Meta's Graph API (sends, history import, profiles).
  inbox: [443],
  // Graph API and S3; media by URL may be http (port 80) or https.
  'publishing-api': [80, 443],
  // Graph API (publishing) and S3.
  'publishing-worker': [443],
  // Partners' webhook URLs: https on any port the partner chose (test pings from the API role).
  'webhooks-api': 'any',
  'webhooks-worker': 'any',
};

/** What production's Secret holds for the connection strings: the managed services' addresses. */
const PRODUCTION_CONNECTIONS = {
  DATABASE_URL: `postgresql://social:secret@${OUTSIDE.managedPostgres.ip}:5432/social?sslmode=require`,
  REDIS_URL: `rediss://:secret@${OUTSIDE.managedRedis.ip}:6380`,
};

const DEFAULT_PORTS: Record<string, number> = {
  'postgresql:': 5432,
  'redis:': 6379,
  'rediss:': 6379,
  'nats:': 4222,
  'http:': 80,
  'https:': 443,
};

type Flow = { from: Endpoint; to: Endpoint; port: number; protocol: Protocol };
const key = ({ from, to, port, protocol }: Flow) => `${where(from)} → ${where(to)}:${port}/${protocol}`;
const where = (e: Endpoint) => (e.namespace ? `${e.namespace}/${e.name}` : e.name);

function buildWorld(overlay: 'development' | 'production') {
  const objects = render(`overlays/${overlay}`);
  const namespace = named(objects, 'Deployment')[0]?.metadata.namespace ?? '';
  const around = surroundings(namespace);
  const nats = overlay === 'production' ? natsReleasePods() : [];
  const natsObjects = overlay === 'production' ? render('nats') : [];
  const own = podsOf(objects);
  const pods = [...own, ...Object.values(around), ...nats];
  const policies = [...named(objects, 'NetworkPolicy'), ...named(natsObjects, 'NetworkPolicy')];
  const services = [
    ...servicesOf(objects),
    // The chart's client Service.
    {
      name: 'nats',
      namespace: 'nats',
      selector: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'nats' },
      ports: [{ port: 4222, target: 'nats' }],
    },
  ];
  const cluster = new Cluster(namespaceLabelsOf(pods), policies as unknown as NetworkPolicy[]);
  return { objects, namespace, around, nats, own, pods, services, cluster };
}

type World = ReturnType<typeof buildWorld>;

/** The pods (or outside address) a host and port of the manifests lead to, and the port on them. */
function resolve(world: World, host: string, port: number): { to: Endpoint; port: number }[] {
  const outside = Object.values(OUTSIDE).find((o) => o.ip === host);
  if (outside) return [{ to: outside, port }];
  const [name = '', namespace = world.namespace] = host.replace(/\.svc\.cluster\.local$/, '').split('.');
  const service = world.services.find((s) => s.name === name && s.namespace === namespace);
  const target = service?.ports.find((p) => p.port === port)?.target;
  // A host the manifests name but do not ship (or a port its Service lacks) can never be reached:
  // it stays in the expected matrix as a connection nothing allows.
  if (!service || target === undefined)
    return [{ to: { name: `${host} (no such Service or port)`, ip: '0.0.0.0', ports: [] }, port }];
  return world.pods
    .filter(
      (p) =>
        p.namespace === namespace && Object.entries(service.selector).every(([k, v]) => p.labels?.[k] === v),
    )
    .map((pod) => ({
      to: pod,
      port: typeof target === 'number' ? target : (pod.ports.find((c) => c.name === target)?.port ?? -1),
    }));
}

/** Where the URL-valued settings of a container lead. */
function settingsPaths(world: World, values: Record<string, string>): { to: Endpoint; port: number }[] {
  const urls = Object.entries(values).flatMap(([name, value]) => {
    if (name === 'NATS_URL') return value.split(',').map((s) => s.trim());
    if (['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT'].includes(name) && value) return [value];
    if (name.endsWith('_GRPC_URL')) return [value.replace('dns:///', 'grpc://')];
    return [];
  });
  return urls.flatMap((text) => {
    const url = new URL(text);
    const port = Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;
    return resolve(world, url.hostname, port);
  });
}

function expectedFlows(world: World, overlay: string, secrets: Record<string, string>): Set<string> {
  const flows = new Set<string>();
  const add = (from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP') =>
    flows.add(key({ from, to, port, protocol }));
  const workloads = world.objects.filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind));
  for (const pod of world.own) {
    add(pod, world.around.dns, 53, 'UDP');
    add(pod, world.around.dns, 53, 'TCP');
    const workload = workloads.find((w) => w.metadata.name === pod.name) as K8sObject;
    for (const container of workload.spec.template.spec.containers) {
      const { values } = containerEnv(world.objects, container, secrets);
      for (const path of settingsPaths(world, values)) add(pod, path.to, path.port);
    }
    const role = pod.labels?.['app.kubernetes.io/name'] ?? '';
    const ports = INTERNET[role];
    for (const host of ports ? PUBLIC_OUTSIDE : [])
      for (const { port } of host.ports) if (ports === 'any' || ports?.includes(port)) add(pod, host, port);
    const system = pod.labels?.['app.kubernetes.io/part-of'] === 'social-publishing';
    // Tracing (production/tracing.yaml): the system's pods may export spans to the collector.
    if (overlay === 'production' && system) add(pod, world.around.collector, 4318);
    for (const ops of pod.ports.filter((p) => p.name === 'ops')) add(world.around.prometheus, pod, ops.port);
  }
  const gateways = world.own.filter((p) => p.labels?.['app.kubernetes.io/name'] === 'gateway');
  for (const source of [...world.pods.filter((p) => p.namespace !== world.namespace), CLIENT])
    for (const gateway of gateways) add(source, gateway, 8080);
  const natsNodes = [
    ...world.nats,
    ...world.own.filter((p) => p.labels?.['app.kubernetes.io/name'] === 'nats'),
  ];
  for (const node of natsNodes) {
    for (const other of world.nats) if (other !== node) add(node, other, 6222);
    for (const watcher of [world.around.keda, world.around.prometheus]) {
      add(watcher, node, 8222);
      if (node.ports.some((p) => p.port === 7777)) add(watcher, node, 7777);
    }
  }
  return flows;
}

function allowedFlows(world: World): Set<string> {
  const flows = new Set<string>();
  const destinations: Endpoint[] = [...world.pods, ...Object.values(OUTSIDE)];
  for (const from of [...world.pods, CLIENT])
    for (const to of destinations) {
      if (from === to) continue;
      const ours = [from.namespace, to.namespace].includes(world.namespace) || to.namespace === 'nats';
      if (!ours) continue;
      for (const { port, protocol } of to.ports)
        if (world.cluster.allows(from, to, port, protocol)) flows.add(key({ from, to, port, protocol }));
    }
  return flows;
}

const SECRETS = {
  development: () => standInSecrets(),
  production: () => ({ ...standInSecrets(), ...PRODUCTION_CONNECTIONS }),
};

describe.each(['development', 'production'] as const)('deploy/k8s overlay %s: connectivity', (overlay) => {
  const world = buildWorld(overlay);
  const expected = expectedFlows(world, overlay, SECRETS[overlay]());
  const allowed = allowedFlows(world);

  // Guarantee: every connection the system needs passes the policies (DNS first of all: without
  // it no pod resolves NATS, its gRPC peers, the managed databases or the Graph API).
  it('lets every needed connection through', () => {
    expect([...expected].filter((flow) => !allowed.has(flow)).sort()).toEqual([]);
    expect(expected.size).toBeGreaterThan(100);
  });

  // Guarantee: nothing else passes: no way in but the gateway's public port and the monitoring
  // ports, no other namespace (labelled as ours or not) into NATS or the services, no private or
  // cloud-metadata address, no gRPC call a service's settings do not name.
  it('lets nothing else through', () => {
    expect([...allowed].filter((flow) => !expected.has(flow)).sort()).toEqual([]);
  });

  // Guarantee: the matrix covers what the issue names, so an empty or partial derivation cannot pass.
  it('covers DNS, NATS, the databases, gRPC, the internet and monitoring', () => {
    const all = [...expected].join('\n');
    for (const role of ['gateway', 'identity', 'accounts', 'publishing-api', 'publishing-worker', 'inbox'])
      expect(all, role).toMatch(new RegExp(`/${role} → kube-system/coredns:53/UDP`));
    expect(all).toMatch(/\/gateway → [^\n]*nats[^\n]*:4222\/TCP/);
    expect(all).toMatch(/\/identity → [^\n]*postgres[^\n]*:5432\/TCP/);
    expect(all).toMatch(/\/gateway → [^\n]*redis[^\n]*:63\d\d\/TCP/);
    for (const target of [
      'identity:50051',
      'accounts:50052',
      'publishing-api:50053',
      'webhooks-api:50054',
      'inbox:50055',
    ])
      expect(all).toContain(`/gateway → ${world.namespace}/${target}/TCP`);
    expect(all).toContain(`/webhooks-worker → partner-webhook:443/TCP`);
    expect(all).toContain(`/publishing-worker → graph-api:443/TCP`);
    expect(all).toContain(`internet-client → ${world.namespace}/gateway:8080/TCP`);
    expect(all).toContain(`monitoring/prometheus → ${world.namespace}/inbox:9105/TCP`);
  });
});
