import { describe, expect, it } from 'vitest';
import { Cluster, type Endpoint, inCidr, type NetworkPolicy, selects } from './network-policy.ts';

// The evaluator the connectivity matrix relies on, case by case against the documented semantics:
// if it let through what Kubernetes denies (or the reverse), the matrix would prove nothing.

const NAMESPACES = {
  app: { 'kubernetes.io/metadata.name': 'app', team: 'a' },
  other: { 'kubernetes.io/metadata.name': 'other' },
  'kube-system': { 'kubernetes.io/metadata.name': 'kube-system' },
};

const pod = (namespace: string, name: string, labels: Record<string, string> = {}, ip = '10.244.0.9') =>
  ({
    name,
    namespace,
    ip,
    labels: { 'app.kubernetes.io/name': name, ...labels },
    ports: [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'ops', port: 9100, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
  }) satisfies Endpoint;

const web = pod('app', 'web', { tier: 'front' }, '10.244.0.1');
const api = pod('app', 'api', { tier: 'back' }, '10.244.0.2');
const stranger = pod('other', 'api', { tier: 'back' }, '10.244.1.1');
const dns = pod('kube-system', 'coredns', { 'k8s-app': 'kube-dns' }, '10.244.2.1');
const internet = {
  name: 'client',
  ip: '203.0.113.7',
  ports: [{ port: 443, protocol: 'TCP' }],
} satisfies Endpoint;
const privateHost = {
  name: 'db',
  ip: '10.20.0.5',
  ports: [{ port: 5432, protocol: 'TCP' }],
} satisfies Endpoint;

const policy = (name: string, spec: NetworkPolicy['spec'], namespace = 'app'): NetworkPolicy => ({
  metadata: { name, namespace },
  spec,
});
const denyAll = policy('deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
const cluster = (...policies: NetworkPolicy[]) => new Cluster(NAMESPACES, policies);

describe('NetworkPolicy evaluation', () => {
  // Guarantee: without any policy everything passes; a default-deny closes both directions.
  it('allows everything until a policy isolates the pod, then nothing', () => {
    expect(cluster().allows(web, api, 8080)).toBe(true);
    expect(cluster(denyAll).allows(web, api, 8080)).toBe(false);
    expect(cluster(denyAll).allows(stranger, api, 8080)).toBe(false);
    expect(cluster(denyAll).allows(api, internet, 443)).toBe(false);
  });

  // Guarantee: a connection needs the destination's ingress AND the source's egress.
  it('needs both the ingress of the destination and the egress of the source', () => {
    const ingress = policy('in', {
      podSelector: { matchLabels: { tier: 'back' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { tier: 'front' } } }] }],
    });
    const egress = policy('out', {
      podSelector: { matchLabels: { tier: 'front' } },
      policyTypes: ['Egress'],
      egress: [{ to: [{ podSelector: { matchLabels: { tier: 'back' } } }] }],
    });
    expect(cluster(denyAll, ingress).allows(web, api, 8080)).toBe(false);
    expect(cluster(denyAll, egress).allows(web, api, 8080)).toBe(false);
    expect(cluster(denyAll, ingress, egress).allows(web, api, 8080)).toBe(true);
    expect(cluster(denyAll, ingress, egress).allows(api, web, 8080)).toBe(false);
  });

  // Guarantee: policyTypes decide what a policy isolates; without them, Ingress always and
  // Egress only with egress rules. A type with no rules allows nothing.
  it('reads policyTypes, and their default', () => {
    const ingressOnly = policy('in', { podSelector: {}, ingress: [] });
    expect(cluster(ingressOnly).allows(web, api, 8080)).toBe(false);
    expect(cluster(ingressOnly).allows(api, internet, 443)).toBe(true);
    const egressRules = policy('out', { podSelector: {}, egress: [] });
    expect(cluster(egressRules).allows(api, internet, 443)).toBe(false);
    const egressTyped = policy('typed', { podSelector: {}, policyTypes: ['Egress'] });
    expect(cluster(egressTyped).allows(api, internet, 443)).toBe(false);
    expect(cluster(egressTyped).allows(internet, api, 8080)).toBe(true);
  });

  // Guarantee: policies add up: what one allows, another cannot take back.
  it('takes the union of the policies selecting a pod', () => {
    const http = policy('http', { podSelector: {}, ingress: [{ ports: [{ port: 8080 }] }] });
    const ops = policy('ops', { podSelector: {}, ingress: [{ ports: [{ port: 9100 }] }] });
    expect(cluster(denyAll, http, ops).allows(internet, api, 8080)).toBe(true);
    expect(cluster(denyAll, http, ops).allows(internet, api, 9100)).toBe(true);
    expect(cluster(denyAll, http).allows(internet, api, 9100)).toBe(false);
  });

  // Guarantee: a podSelector peer means pods of the policy's own namespace; a namespaceSelector
  // with a podSelector in one peer means both (AND), in two peers either (OR).
  it('scopes pod selectors to the namespace and combines peers as documented', () => {
    const sameNamespace = policy('same', {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'web' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { tier: 'back' } } }] }],
    });
    expect(cluster(sameNamespace).allows(api, web, 8080)).toBe(true);
    expect(cluster(sameNamespace).allows(stranger, web, 8080)).toBe(false);

    const and = policy('and', {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'web' } },
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
              podSelector: { matchLabels: { tier: 'back' } },
            },
          ],
        },
      ],
    });
    expect(cluster(and).allows(stranger, web, 8080)).toBe(false);
    expect(cluster(and).allows(api, web, 8080)).toBe(false);
    expect(cluster(and).allows(dns, web, 8080)).toBe(false);

    const or = policy('or', {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'web' } },
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
            { podSelector: { matchLabels: { tier: 'back' } } },
          ],
        },
      ],
    });
    expect(cluster(or).allows(dns, web, 8080)).toBe(true);
    expect(cluster(or).allows(api, web, 8080)).toBe(true);
    expect(cluster(or).allows(stranger, web, 8080)).toBe(false);
  });

  // Guarantee: the bug of issue 25: a label added to the DNS peer's podSelector that CoreDNS does
  // not carry leaves every pod without DNS; by namespace alone, DNS answers.
  it('denies DNS to a peer selector CoreDNS does not match', () => {
    const dnsBy = (peer: object) =>
      policy('dns', {
        podSelector: {},
        policyTypes: ['Egress'],
        egress: [{ to: [peer], ports: [{ protocol: 'UDP', port: 53 }] }],
      });
    const broken = dnsBy({
      namespaceSelector: {},
      podSelector: {
        matchLabels: { 'k8s-app': 'kube-dns', 'app.kubernetes.io/part-of': 'social-publishing' },
      },
    });
    const fixed = dnsBy({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
    });
    expect(cluster(denyAll, broken).allows(api, dns, 53, 'UDP')).toBe(false);
    expect(cluster(denyAll, fixed).allows(api, dns, 53, 'UDP')).toBe(true);
    expect(cluster(denyAll, fixed).allows(api, dns, 53, 'TCP')).toBe(false);
  });

  // Guarantee: ipBlock admits its CIDR minus the `except` ranges; selectors never match addresses
  // outside the cluster.
  it('matches ipBlock ranges with their exceptions', () => {
    const publicOnly = policy('public', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '169.254.0.0/16'] } }],
          ports: [{ port: 443 }],
        },
      ],
    });
    const metadata = { name: 'metadata', ip: '169.254.169.254', ports: [] } satisfies Endpoint;
    expect(cluster(publicOnly).allows(api, internet, 443)).toBe(true);
    expect(cluster(publicOnly).allows(api, privateHost, 443)).toBe(false);
    expect(cluster(publicOnly).allows(api, metadata, 443)).toBe(false);
    expect(cluster(publicOnly).allows(api, web, 443)).toBe(false);
    const anyPod = policy('pods', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {} }] }] });
    expect(cluster(anyPod).allows(internet, api, 8080)).toBe(false);
    expect(cluster(anyPod).allows(stranger, api, 8080)).toBe(true);
    expect(inCidr('10.20.0.255', '10.20.0.0/24')).toBe(true);
    expect(inCidr('10.20.1.0', '10.20.0.0/24')).toBe(false);
  });

  // Guarantee: ports match by protocol (TCP by default), number, endPort range or container port
  // name; a protocol entry without a number admits every port of that protocol only.
  it('matches ports by protocol, number, range and name', () => {
    const rule = (ports: object[]) =>
      cluster(denyAll, policy('p', { podSelector: {}, ingress: [{ ports: ports as never }] }));
    expect(rule([{ port: 53 }]).allows(internet, api, 53, 'UDP')).toBe(false);
    expect(rule([{ port: 53 }]).allows(internet, api, 53, 'TCP')).toBe(true);
    expect(rule([{ protocol: 'UDP', port: 53 }]).allows(internet, api, 53, 'UDP')).toBe(true);
    expect(rule([{ port: 9000, endPort: 9200 }]).allows(internet, api, 9100)).toBe(true);
    expect(rule([{ port: 9000, endPort: 9200 }]).allows(internet, api, 9201)).toBe(false);
    expect(rule([{ port: 'ops' }]).allows(internet, api, 9100)).toBe(true);
    expect(rule([{ port: 'ops' }]).allows(internet, api, 8080)).toBe(false);
    expect(rule([{ protocol: 'TCP' }]).allows(internet, api, 12345)).toBe(true);
    expect(rule([{ protocol: 'TCP' }]).allows(internet, api, 53, 'UDP')).toBe(false);
  });

  // Guarantee: label selector operators behave as the API defines them.
  it('evaluates label selector expressions', () => {
    const labels = { tier: 'back', env: 'prod' };
    expect(selects({}, labels)).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, labels)).toBe(
      true,
    );
    expect(
      selects({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['back'] }] }, labels),
    ).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels)).toBe(
      true,
    );
    expect(selects({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, labels)).toBe(
      false,
    );
    expect(selects({ matchExpressions: [{ key: 'env', operator: 'Exists' }] }, labels)).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, labels)).toBe(false);
    expect(
      selects(
        { matchLabels: { tier: 'back' }, matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] },
        labels,
      ),
    ).toBe(false);
  });

  // Guarantee: a policy of another namespace never applies to a pod.
  it('applies policies only to pods of their own namespace', () => {
    const elsewhere = policy('deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }, 'other');
    expect(cluster(elsewhere).allows(web, api, 8080)).toBe(true);
    expect(cluster(elsewhere).allows(web, stranger, 8080)).toBe(false);
  });
});
