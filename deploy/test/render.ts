import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as rendered: enough shape for the checks, the rest stays open. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are checked by the schemas, not by TypeScript
  spec?: any;
  data?: Record<string, string>;
}

export const K8S_DIR = path.resolve(import.meta.dirname, '../k8s');

/**
 * Renders a kustomization with the real kustomize built into kubectl (`kubectl kustomize`), as a
 * deployment would; .ci/run installs kubectl from Debian's packages where it is missing (v1.20,
 * whose kustomize v2.0 renders these manifests the same as v5: they use no newer field).
 */
export function render(dir: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', path.join(K8S_DIR, dir)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null)
    .map(unfoldSecretData);
}

/**
 * kustomize folds a generated Secret's long base64 values over several lines; the API server's
 * decoder skips line breaks, the schema's `byte` format does not, so they are joined first.
 */
function unfoldSecretData(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data).map(([k, v]) => [k, v.replace(/\s/g, '')]));
  return { ...object, data };
}

export const named = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);

/** The object of that kind and name, or a failure naming what is missing. */
export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found;
}
