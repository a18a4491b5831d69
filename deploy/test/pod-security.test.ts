import { describe, expect, it } from 'vitest';
import { hardeningProblems, restrictedProblems } from './pod-security.ts';
import { type K8sObject, render } from './render.ts';

const WORKLOADS = ['Deployment', 'StatefulSet', 'Job'];
const OVERLAYS = ['development', 'production'] as const;

/** A pod that passes: every other case breaks one rule of it. */
const goodPod = () => ({
  automountServiceAccountToken: false,
  securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [
    {
      name: 'app',
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      },
    },
  ],
  volumes: [{ name: 'tmp', emptyDir: {} }],
});

describe('the restricted profile check', () => {
  // Guarantee: the check passes a compliant pod and names each rule a pod breaks, so a pass over
  // the rendered overlays means something.
  it('passes a compliant pod and reports each broken rule', () => {
    expect(restrictedProblems(goodPod())).toEqual([]);
    expect(hardeningProblems(goodPod())).toEqual([]);
    const broken = (change: (pod: ReturnType<typeof goodPod>) => void) => {
      const pod = goodPod();
      change(pod);
      return [...restrictedProblems(pod), ...hardeningProblems(pod)];
    };
    expect(
      broken((p) => delete (p.securityContext as Partial<typeof p.securityContext>).seccompProfile),
    ).toEqual(['container app: seccompProfile must be RuntimeDefault or Localhost']);
    expect(
      broken((p) => Object.assign(p.containers[0] as object, { securityContext: { privileged: true } })),
    ).toEqual(
      expect.arrayContaining([
        'container app: must not be privileged',
        'container app: allowPrivilegeEscalation must be false',
        'container app: capabilities must drop ALL',
        'container app: readOnlyRootFilesystem must be true',
      ]),
    );
    expect(broken((p) => (p.securityContext.runAsNonRoot = false))).toEqual([
      'container app: runAsNonRoot must be true',
    ]);
    expect(broken((p) => p.volumes.push({ name: 'host', hostPath: { path: '/' } } as never))).toEqual([
      'pod: volume host of type hostPath is not allowed',
    ]);
    expect(broken((p) => Object.assign(p, { hostNetwork: true }))).toEqual([
      'pod: host namespaces must not be shared',
    ]);
    expect(
      broken((p) =>
        Object.assign(p.containers[0]?.securityContext as object, {
          capabilities: { drop: ['ALL'], add: ['SYS_ADMIN'] },
        }),
      ),
    ).toEqual(['container app: capability SYS_ADMIN must not be added']);
    expect(broken((p) => delete (p as Partial<typeof p>).automountServiceAccountToken)).toEqual([
      'pod: automountServiceAccountToken must be false',
    ]);
  });
});

describe.each(OVERLAYS)('deploy/k8s overlay %s: pod security', (overlay) => {
  const workloads = render(`overlays/${overlay}`).filter((o) => WORKLOADS.includes(o.kind));
  const problemsOf = (o: K8sObject) =>
    [...restrictedProblems(o.spec.template.spec), ...hardeningProblems(o.spec.template.spec)].map(
      (p) => `${o.kind} ${o.metadata.name}: ${p}`,
    );

  // Guarantee: every pod the overlay runs (the migration Job and development's infrastructure
  // included) is admitted in a namespace enforcing Pod Security "restricted", carries no API token
  // and writes only to its volumes.
  it('runs every pod under the restricted profile, read-only, without an API token', () => {
    expect(workloads.length).toBeGreaterThan(8);
    expect(workloads.flatMap(problemsOf)).toEqual([]);
  });

  // Guarantee: a replicated role (more than one replica, or a scaler) spreads its pods over nodes,
  // so losing one node does not take every replica.
  it('spreads every replicated role over nodes and zones', () => {
    const system = workloads.filter(
      (o) =>
        o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/part-of'] === 'social-publishing',
    );
    expect(system.length).toBe(8);
    for (const deployment of system) {
      const name = deployment.metadata.name;
      const spread = deployment.spec.template.spec.topologySpreadConstraints ?? [];
      const keys = spread.map((c: { topologyKey: string }) => c.topologyKey);
      expect(keys, name).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
      for (const constraint of spread)
        expect(constraint.labelSelector.matchLabels, name).toEqual({ 'app.kubernetes.io/name': name });
    }
  });
});
