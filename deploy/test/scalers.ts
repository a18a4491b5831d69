import { CONSUMERS, Subjects } from '../../packages/bus/src/catalog.ts';
import { find, type K8sObject, named } from './render.ts';

/**
 * KEDA reads the lag of one JetStream consumer by stream and consumer name; a name that does not
 * exist makes it scale the target to its maximum. Each trigger must name a durable consumer of the
 * catalog, with the NATS_PREFIX the overlay gives the services, read by the service the target runs.
 */
export function scalerProblems(objects: K8sObject[]): string[] {
  const prefix = find(objects, 'ConfigMap', 'social-common').data?.NATS_PREFIX ?? '';
  const subjects = new Subjects(prefix);
  const known = Object.values(CONSUMERS).map((consumer) => ({
    stream: subjects.streamName(consumer.subject.stream),
    consumer: subjects.durable(consumer),
    service: consumer.durable.split('-')[0],
  }));
  const problems: string[] = [];
  for (const scaled of named(objects, 'ScaledObject')) {
    const target = find(objects, 'Deployment', scaled.spec.scaleTargetRef.name);
    const service = target.spec.template.spec.containers[0].name;
    for (const trigger of scaled.spec.triggers) {
      const { stream, consumer } = trigger.metadata;
      const match = known.find((k) => k.stream === stream && k.consumer === consumer);
      if (!match)
        problems.push(`${scaled.metadata.name}: ${stream}/${consumer} is no consumer of the catalog`);
      else if (match.service !== service)
        problems.push(`${scaled.metadata.name}: ${consumer} is read by ${match.service}, not ${service}`);
    }
  }
  return problems;
}
