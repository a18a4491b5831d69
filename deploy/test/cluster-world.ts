import type { ContainerPort, Endpoint, Labels, NetworkPolicy, Protocol } from './network-policy.ts';
import type { K8sObject } from './render.ts';

/**
 * The cluster the manifests are evaluated in: the overlay's pods as rendered, and around them what a
 * real cluster has, labelled as it really is: CoreDNS (`k8s-app: kube-dns` in kube-system), the NATS
 * Helm chart's pods (`app.kubernetes.io/name: nats`, namespace `nats`), Prometheus, KEDA and an
 * OpenTelemetry collector in their namespaces, and pods that must be kept out (one in another
 * namespace wearing the system's labels). Outside addresses stand for the internet and for private
 * networks.
 */
export interface World {
  namespace: string;
  pods: Endpoint[];
  /** Addresses outside the cluster a connection may go to. */
  outside: Endpoint[];
  /** A client on the internet: a source only. */
  client: Endpoint;
  policies: NetworkPolicy[];
  namespaceLabels: Record<string, Labels>;
  /** Where a host name of the manifests leads: `<service>.<namespace>` (or a bare Service name). */
  services: {
    name: string;
    namespace: string;
    selector: Labels;
    ports: { port: number; target: string | number }[];
  }[];
}

const WORKLOADS = ['Deployment', 'StatefulSet', 'Job'];

let lastIp = 0;
const podIp = () => `10.244.${Math.floor(++lastIp / 250)}.${(lastIp % 250) + 1}`;

const port = (number: number, name?: string, protocol: Protocol = 'TCP'): ContainerPort => ({
  port: number,
  protocol,
  ...(name ? { name } : {}),
});

/** One pod per workload of the rendered overlay, with its template's labels and container ports. */
export function podsOf(objects: K8sObject[]): Endpoint[] {
  return objects
    .filter((o) => WORKLOADS.includes(o.kind))
    .map((o) => ({
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      ip: podIp(),
      labels: o.spec.template.metadata.labels,
      ports: (
        o.spec.template.spec.containers as {
          ports?: { name?: string; containerPort: number; protocol?: Protocol }[];
        }[]
      )
        .flatMap((c) => c.ports ?? [])
        .map((p) => port(p.containerPort, p.name, p.protocol ?? 'TCP')),
    }));
}

const worldPod = (namespace: string, name: string, labels: Labels, ports: ContainerPort[]): Endpoint => ({
  name,
  namespace,
  ip: podIp(),
  labels,
  ports,
});

/** The NATS chart's pods: three JetStream nodes labelled as the chart labels them. */
export const natsReleasePods = () =>
  [0, 1, 2].map((i) =>
    worldPod(
      'nats',
      `nats-${i}`,
      {
        'app.kubernetes.io/name': 'nats',
        'app.kubernetes.io/instance': 'nats',
        'app.kubernetes.io/component': 'nats',
      },
      [port(4222, 'nats'), port(6222, 'cluster'), port(8222, 'monitor'), port(7777, 'prom-metrics')],
    ),
  );

export const surroundings = (namespace: string) => ({
  dns: worldPod('kube-system', 'coredns', { 'k8s-app': 'kube-dns' }, [
    port(53, 'dns', 'UDP'),
    port(53, 'dns-tcp'),
  ]),
  prometheus: worldPod('monitoring', 'prometheus', { 'app.kubernetes.io/name': 'prometheus' }, [port(9090)]),
  keda: worldPod('keda', 'keda-operator', { app: 'keda-operator' }, [port(8080)]),
  collector: worldPod('observability', 'otel-collector', { 'app.kubernetes.io/name': 'otel-collector' }, [
    port(4318),
  ]),
  ingressController: worldPod('ingress-nginx', 'controller', { 'app.kubernetes.io/name': 'ingress-nginx' }, [
    port(443),
  ]),
  // Wears the system's labels in another namespace: must reach nothing but the public port.
  intruder: worldPod(
    'intruder',
    'gateway',
    { 'app.kubernetes.io/name': 'gateway', 'app.kubernetes.io/part-of': 'social-publishing' },
    [port(8080)],
  ),
  // The other overlay's namespace, when both run in one cluster.
  neighbour: worldPod(
    namespace === 'social' ? 'social-dev' : 'social',
    'identity',
    { 'app.kubernetes.io/name': 'identity', 'app.kubernetes.io/part-of': 'social-publishing' },
    [port(50051)],
  ),
});

/** Addresses outside the cluster, by what they stand for. */
export const OUTSIDE = {
  graphApi: { name: 'graph-api', ip: '157.240.22.35', ports: [port(443)] },
  s3: { name: 's3', ip: '52.218.1.10', ports: [port(443)] },
  partner: { name: 'partner-webhook', ip: '203.0.113.10', ports: [port(443), port(8443)] },
  mediaHost: { name: 'media-host', ip: '198.51.100.7', ports: [port(80), port(443)] },
  managedPostgres: { name: 'managed-postgres', ip: '10.20.0.10', ports: [port(5432)] },
  // The TLS port of the README's example (rediss://…:6380).
  managedRedis: { name: 'managed-redis', ip: '10.20.1.10', ports: [port(6380)] },
  privateHost: { name: 'private-host', ip: '10.1.2.3', ports: [port(80), port(443), port(5432)] },
  cloudMetadata: { name: 'cloud-metadata', ip: '169.254.169.254', ports: [port(80)] },
} satisfies Record<string, Endpoint>;

/** Public addresses: what `except` lists of the policies must not swallow. */
export const PUBLIC_OUTSIDE = [OUTSIDE.graphApi, OUTSIDE.s3, OUTSIDE.partner, OUTSIDE.mediaHost];

export const CLIENT: Endpoint = { name: 'internet-client', ip: '198.51.100.50', ports: [] };

export function namespaceLabelsOf(pods: Endpoint[]): Record<string, Labels> {
  const names = new Set(pods.map((p) => p.namespace).filter((n): n is string => Boolean(n)));
  return Object.fromEntries([...names].map((n) => [n, { 'kubernetes.io/metadata.name': n }]));
}

/** The rendered Services, for resolving host names to pods. */
export function servicesOf(objects: K8sObject[]): World['services'] {
  return objects
    .filter((o) => o.kind === 'Service')
    .map((o) => ({
      name: o.metadata.name,
      namespace: o.metadata.namespace ?? 'default',
      selector: o.spec.selector,
      ports: o.spec.ports.map((p: { port: number; targetPort?: string | number }) => ({
        port: p.port,
        target: p.targetPort ?? p.port,
      })),
    }));
}
