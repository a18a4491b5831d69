import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import type { K8sObject } from './render.ts';

/** The JSON-schema validators of kubernetes-models (and its KEDA models) by apiVersion and kind. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

/** Validates against the Kubernetes schemas; answers the problem, or null when the object is valid. */
export function schemaProblem(object: K8sObject): string | null {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) return `no schema known for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(object as never).validate();
    return null;
  } catch (error) {
    return `${object.kind} ${object.metadata.name}: ${(error as Error).message}`;
  }
}
