import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { committedUsers, NATS_SERVICES, passwordVariable } from './nats-users.ts';
import { find, K8S_DIR, type K8sObject, named, render } from './render.ts';
import { scalerProblems } from './scalers.ts';
import { schemaProblem } from './schemas.ts';
import {
  containerEnv,
  containersOf,
  parseContainerEnv,
  requiredVariables,
  standInSecrets,
  unknownVariables,
} from './service-config.ts';

const OVERLAYS = ['development', 'production'] as const;
const rendered = Object.fromEntries(OVERLAYS.map((overlay) => [overlay, render(`overlays/${overlay}`)]));

/** The system's own workloads (not development's infrastructure): they carry the part-of label. */
const isSystem = (o: K8sObject) => o.metadata.labels?.['app.kubernetes.io/part-of'] === 'social-publishing';

/** Every Deployment and Job container of the system with the service it runs and its environment. */
function containers(objects: K8sObject[], secret: Record<string, string>) {
  return [...named(objects, 'Deployment'), ...named(objects, 'Job')].filter(isSystem).flatMap((owner) =>
    containersOf(owner).map((container) => ({
      where: `${owner.kind} ${owner.metadata.name}`,
      service: container.name as string,
      env: containerEnv(objects, container, secret),
    })),
  );
}

/** The development overlay's Secret; production's is made outside, so stand-ins. */
function secretValues(objects: K8sObject[]): Record<string, string> {
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'social-secrets');
  if (!secret) return standInSecrets();
  const decoded = Object.entries(secret.data ?? {}).map(([key, value]) => [
    key,
    Buffer.from(value, 'base64').toString(),
  ]);
  return {
    ...Object.fromEntries(decoded),
    ...(secret as { stringData?: Record<string, string> }).stringData,
  };
}

describe.each(OVERLAYS)('deploy/k8s overlay %s', (overlay) => {
  const objects = rendered[overlay] as K8sObject[];

  // Guarantee: `kubectl kustomize` renders the overlay, and every object is valid against the
  // Kubernetes (and KEDA) schemas, so `kubectl apply` would not refuse any of them.
  it('renders and validates against the Kubernetes schemas', () => {
    expect(objects.length).toBeGreaterThan(30);
    expect(objects.map(schemaProblem).filter(Boolean)).toEqual([]);
  });

  // Guarantee: no manifest sets a variable its service does not read (a typo would silently
  // leave the default), and each container's environment passes the service's config schema.
  it('sets only variables the services read, and each starts with them', () => {
    for (const { where, service, env } of containers(objects, secretValues(objects))) {
      expect(unknownVariables(service, env), where).toEqual([]);
      expect(() => parseContainerEnv(service, env), where).not.toThrow();
      expect(env.values.OPS_HOST ?? '0.0.0.0', where).toBe('0.0.0.0');
    }
  });

  // Guarantee: KEDA scales on consumers that exist (a wrong name scales to the maximum).
  it('scales the workers on the real, prefixed JetStream consumers', () => {
    expect(scalerProblems(objects).sort()).toEqual([]);
    const targets = named(objects, 'ScaledObject').map((s) => s.spec.scaleTargetRef.name);
    expect(targets.sort()).toEqual(['inbox', 'publishing-worker', 'webhooks-worker']);
  });

  // Guarantee: every role is probed on its ops port, drains within its grace period after a
  // preStop pause, keeps one pod through voluntary disruptions, and has requests and limits.
  it('gives every Deployment probes, a drain window, a disruption budget and resources', () => {
    const deployments = named(objects, 'Deployment').filter(isSystem);
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(
      [
        'accounts',
        'gateway',
        'identity',
        'inbox',
        'publishing-api',
        'publishing-worker',
        'webhooks-api',
        'webhooks-worker',
      ].sort(),
    );
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      const name = deployment.metadata.name;
      expect(container.readinessProbe.httpGet, name).toEqual({ path: '/readyz', port: 'ops' });
      expect(container.livenessProbe.httpGet, name).toEqual({ path: '/healthz', port: 'ops' });
      const pause = Number(container.lifecycle.preStop.exec.command[1]);
      // The drain after the pause: gRPC calls get 10 s (ops runtime), requests up to 30 s.
      expect(pod.terminationGracePeriodSeconds, name).toBeGreaterThan(pause + 10);
      expect(container.resources.requests, name).toMatchObject({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      expect(container.resources.limits, name).toMatchObject({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      const budget = find(objects, 'PodDisruptionBudget', name);
      expect(budget.spec.selector.matchLabels['app.kubernetes.io/name']).toBe(name);
    }
    expect(
      find(objects, 'Deployment', 'gateway').spec.template.spec.terminationGracePeriodSeconds,
    ).toBeGreaterThan(40);
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'gateway');
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
  });

  // Guarantee: a Deployment whose count an autoscaler owns sets no `replicas` (every apply would
  // reset the scaler's choice); the others set theirs; each scaler keeps at least the overlay's floor.
  it('leaves the replica count to the scaler where one owns it', () => {
    const hpaTargets = named(objects, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name);
    const kedaTargets = named(objects, 'ScaledObject').map((s) => s.spec.scaleTargetRef.name);
    const scaled = [...hpaTargets, ...kedaTargets];
    expect(scaled.sort()).toEqual(['gateway', 'inbox', 'publishing-worker', 'webhooks-worker']);
    const floor = overlay === 'production' ? 2 : 1;
    for (const deployment of named(objects, 'Deployment').filter(isSystem)) {
      const name = deployment.metadata.name;
      if (scaled.includes(name)) expect(deployment.spec.replicas, name).toBeUndefined();
      else expect(deployment.spec.replicas, name).toBeGreaterThanOrEqual(floor);
    }
    for (const hpa of named(objects, 'HorizontalPodAutoscaler'))
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(floor);
    for (const scaler of named(objects, 'ScaledObject'))
      expect(scaler.spec.minReplicaCount).toBeGreaterThanOrEqual(floor);
  });

  // Guarantee: only the gateway admits traffic from outside the system (a policy with no `from`).
  it('opens only the gateway to the outside', () => {
    const open = named(objects, 'NetworkPolicy').filter((policy) =>
      (policy.spec.ingress ?? []).some((rule: { from?: unknown[] }) => !rule.from),
    );
    expect(open.map((p) => p.spec.podSelector.matchLabels['app.kubernetes.io/name'])).toEqual(['gateway']);
    expect(find(objects, 'NetworkPolicy', 'default-deny').spec.policyTypes).toEqual(['Ingress', 'Egress']);
  });
});

/** The connection strings a service opens (they may carry passwords): the gateway has no database. */
const connectionsOf = (service: string) =>
  [
    service === 'gateway' ? [] : ['DATABASE_URL'],
    ['gateway', 'identity'].includes(service) ? ['REDIS_URL'] : [],
  ].flat();

describe('production secrets', () => {
  const objects = rendered.production as K8sObject[];

  // Guarantee: every variable production mode refuses to start without comes from the Secret
  // (never a literal in a manifest), as do the connection strings that carry passwords, and no
  // Secret with values is part of the production manifests.
  it('provides every required secret through a Secret reference', () => {
    expect(named(objects, 'Secret')).toEqual([]);
    for (const { where, service, env } of containers(objects, standInSecrets())) {
      const required = requiredVariables(service, env);
      for (const name of [...required, ...connectionsOf(service)])
        expect(env.fromSecret.has(name), `${where}: ${name}`).toBe(true);
    }
  });
});

describe('production images and NATS users', () => {
  const objects = rendered.production as K8sObject[];

  // Guarantee: production runs exactly the images a release tested: each by digest, never by a
  // tag that can move (the zeros are placeholders a release replaces).
  it('pins every image by digest', () => {
    const images = [...named(objects, 'Deployment'), ...named(objects, 'Job')].flatMap((o) =>
      o.spec.template.spec.containers.map((c: { image: string }) => c.image),
    );
    expect(images.length).toBeGreaterThan(8);
    for (const image of images) expect(image).toMatch(/^[a-z0-9.-]+\/[a-z0-9/-]+@sha256:[0-9a-f]{64}$/);
  });

  // Guarantee: each service connects to NATS as its own user (deploy/k8s/nats/users.yaml), whose
  // password comes from the Secret, never from a literal.
  it('gives every service its own NATS user from the Secret', () => {
    const users = committedUsers().map((u) => u.user);
    for (const deployment of named(objects, 'Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const env = containerEnv(objects, container, standInSecrets());
      const user = env.values.NATS_USER ?? '';
      expect(NATS_SERVICES, deployment.metadata.name).toContain(container.name);
      expect(user, deployment.metadata.name).toBe(container.name);
      expect(users).toContain(user);
      expect(env.fromSecret.has('NATS_PASSWORD'), deployment.metadata.name).toBe(true);
      const ref = container.env.find((v: { name: string }) => v.name === 'NATS_PASSWORD').valueFrom
        .secretKeyRef;
      expect(ref).toEqual({ name: 'social-secrets', key: passwordVariable(user) });
    }
  });

  // Guarantee: the NATS chart is installed at one known version: the values, the users file and
  // the README name the same one, so a chart release changes nothing until it is chosen.
  it('pins the NATS chart version', () => {
    const read = (file: string) => readFileSync(path.join(K8S_DIR, file), 'utf8');
    const versions = ['nats/values.yaml', 'nats/users.yaml', 'README.md'].map(
      (file) => read(file).match(/nats\/nats --version (\d+\.\d+\.\d+)/)?.[1],
    );
    expect(versions[0]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(new Set(versions).size).toBe(1);
  });
});

describe('development NATS', () => {
  const objects = rendered.development as K8sObject[];

  // Guarantee: development runs without NATS credentials, on the NATS it ships itself, and KEDA
  // reads the lag from that NATS (a scaler asking another server would see no consumer).
  it('uses its own NATS without credentials', () => {
    const common = find(objects, 'ConfigMap', 'social-common').data ?? {};
    expect(common.NATS_URL).toBe('nats://nats.social-dev.svc.cluster.local:4222');
    find(objects, 'Service', 'nats');
    for (const { where, env } of containers(objects, secretValues(objects)))
      expect([env.values.NATS_USER, env.values.NATS_PASSWORD], where).toEqual([undefined, undefined]);
    for (const scaler of named(objects, 'ScaledObject'))
      expect(scaler.spec.triggers[0].metadata.natsServerMonitoringEndpoint).toBe(
        'nats.social-dev.svc.cluster.local:8222',
      );
  });
});

describe('the KEDA name check', () => {
  // Guarantee: the check itself catches a consumer name without the prefix or of another service.
  it('reports a wrong or unprefixed consumer name', () => {
    const objects = structuredClone(rendered.development) as K8sObject[];
    const worker = find(objects, 'ScaledObject', 'publishing-worker');
    worker.spec.triggers[0].metadata.consumer = 'publishing-workers';
    const inbox = find(objects, 'ScaledObject', 'inbox');
    inbox.spec.triggers[0].metadata.consumer = 'devaccounts-provider-webhooks';
    expect(scalerProblems(objects)).toEqual([
      'inbox: devaccounts-provider-webhooks is read by accounts, not inbox',
      'publishing-worker: devJOBS/publishing-workers is no consumer of the catalog',
    ]);
  });
});
