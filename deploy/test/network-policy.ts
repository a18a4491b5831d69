/**
 * What a set of NetworkPolicies lets through, evaluated as the Kubernetes documentation states it
 * (concepts/services-networking/network-policies, and the NetworkPolicy API reference):
 *
 * - A pod is isolated for ingress (egress) when at least one policy of its namespace selects it
 *   (`spec.podSelector`, `{}` = every pod of the namespace) with Ingress (Egress) among its
 *   `policyTypes`. Without `policyTypes`, a policy is Ingress, plus Egress when it has egress rules.
 * - A pod that is not isolated in a direction allows everything in that direction. An isolated one
 *   allows what at least one rule of one of the policies selecting it allows: policies add up
 *   (a union), they never subtract; a policy with the type but no rules allows nothing.
 * - A connection happens only when the source's egress AND the destination's ingress allow it
 *   (replies of an allowed connection are implicit and not evaluated here).
 * - A rule with no `from`/`to` (or an empty list) matches every peer; with no `ports` (or an empty
 *   list), every port. A peer is a `podSelector` (pods of the policy's own namespace), a
 *   `namespaceSelector` (every pod of those namespaces), both in one peer (those pods of those
 *   namespaces: AND), or an `ipBlock` (a CIDR minus its `except` ranges). Separate peers are OR.
 * - A port has a protocol (TCP when not given) and optionally a number, a range up to `endPort`,
 *   or a name, which means the destination pod's container port of that name. No port: every port
 *   of that protocol.
 * - Selectors: `matchLabels` and every `matchExpressions` entry must hold (In, NotIn, Exists,
 *   DoesNotExist; NotIn holds when the key is absent); an empty selector matches everything.
 *
 * Choices where the documentation leaves it to the network plugin: an `ipBlock` is matched against
 * pod addresses too (the broader reading, so that a test of what is denied stays on the safe side);
 * traffic from a node to its pods (kubelet probes) is always allowed and is not modelled.
 */

export type Labels = Record<string, string>;
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}

export interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PolicyPort {
  protocol?: Protocol;
  port?: number | string;
  endPort?: number;
}

interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: PolicyPort[];
}

export interface NetworkPolicy {
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: ('Ingress' | 'Egress')[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

export interface ContainerPort {
  name?: string;
  port: number;
  protocol: Protocol;
}

/** A pod (or an address outside the cluster: no namespace, no labels) and what it listens on. */
export interface Endpoint {
  name: string;
  ip: string;
  namespace?: string;
  labels?: Labels;
  ports: ContainerPort[];
}

export function selects(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = key in labels;
    if (operator === 'Exists') return has;
    if (operator === 'DoesNotExist') return !has;
    if (operator === 'In') return has && values.includes(labels[key] as string);
    return !has || !values.includes(labels[key] as string);
  });
}

/** An IPv4 address as a number, or NaN when it is not one. */
function ipv4(text: string): number {
  const parts = text.split('.');
  if (parts.length !== 4) return Number.NaN;
  return parts.reduce(
    (n, part) => (/^\d{1,3}$/.test(part) && Number(part) < 256 ? n * 256 + Number(part) : Number.NaN),
    0,
  );
}

export function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4(base) / size) * size;
  const address = ipv4(ip);
  return address >= start && address < start + size;
}

export class Cluster {
  /**
   * @param namespaceLabels each namespace's labels (Kubernetes sets `kubernetes.io/metadata.name`
   *   on every namespace; pass it here).
   */
  constructor(
    private readonly namespaceLabels: Record<string, Labels>,
    private readonly policies: NetworkPolicy[],
  ) {}

  /** Whether `from` may open a connection to `to` on this port and protocol. */
  allows(from: Endpoint, to: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
    return (
      this.admits('Egress', from, to, port, protocol, to) &&
      this.admits('Ingress', to, from, port, protocol, to)
    );
  }

  /** Whether `subject`'s policies of this direction admit `peer` (the destination is `target`). */
  private admits(
    direction: 'Ingress' | 'Egress',
    subject: Endpoint,
    peer: Endpoint,
    port: number,
    protocol: Protocol,
    target: Endpoint,
  ): boolean {
    if (subject.namespace === undefined) return true; // outside the cluster: no policy applies
    const applying = this.policies.filter(
      (policy) =>
        (policy.metadata.namespace ?? 'default') === subject.namespace &&
        typesOf(policy).includes(direction) &&
        selects(policy.spec.podSelector, subject.labels ?? {}),
    );
    if (applying.length === 0) return true;
    return applying.some((policy) => {
      const rules = (direction === 'Ingress' ? policy.spec.ingress : policy.spec.egress) ?? [];
      return rules.some((rule) => {
        const peers = direction === 'Ingress' ? rule.from : rule.to;
        const peerMatches =
          !peers || peers.length === 0 || peers.some((p) => this.peerMatches(p, peer, policy));
        return peerMatches && portMatches(rule.ports, port, protocol, target);
      });
    });
  }

  private peerMatches(peer: PolicyPeer, endpoint: Endpoint, policy: NetworkPolicy): boolean {
    if (peer.ipBlock)
      return (
        inCidr(endpoint.ip, peer.ipBlock.cidr) &&
        !(peer.ipBlock.except ?? []).some((range) => inCidr(endpoint.ip, range))
      );
    if (endpoint.namespace === undefined) return false; // selectors choose pods only
    const namespaceOk = peer.namespaceSelector
      ? selects(peer.namespaceSelector, this.namespaceLabels[endpoint.namespace] ?? {})
      : endpoint.namespace === (policy.metadata.namespace ?? 'default');
    return namespaceOk && (!peer.podSelector || selects(peer.podSelector, endpoint.labels ?? {}));
  }
}

function typesOf(policy: NetworkPolicy): string[] {
  return policy.spec.policyTypes ?? ['Ingress', ...(policy.spec.egress ? ['Egress'] : [])];
}

function portMatches(ports: PolicyPort[] | undefined, port: number, protocol: Protocol, target: Endpoint) {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string')
      return target.ports.some((c) => c.name === p.port && c.protocol === protocol && c.port === port);
    return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
  });
}
