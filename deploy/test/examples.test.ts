import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { gatewayConfigSchema } from '../../services/gateway/src/config.ts';
import { publishingConfigSchema } from '../../services/publishing/src/config.ts';
import { K8S_DIR, type K8sObject } from './render.ts';
import { schemaProblem } from './schemas.ts';

const load = (file: string) =>
  parseAllDocuments(readFileSync(path.join(K8S_DIR, 'examples', file), 'utf8')).map(
    (d) => d.toJS() as K8sObject,
  );

/** The gateway's own deadline and the media upload limit, as the services default them. */
const development = { APP_ENV: 'development' };
const REQUEST_TIMEOUT_S =
  Number(gatewayConfigSchema(development).shape.REQUEST_TIMEOUT_MS.parse(undefined)) / 1000;
const UPLOAD_TIMEOUT_S =
  Number(gatewayConfigSchema(development).shape.UPLOAD_TIMEOUT_MS.parse(undefined)) / 1000;
const publishing = publishingConfigSchema(development).shape;
const MEDIA_MAX_BYTES = Number(publishing.MEDIA_MAX_BYTES.parse(undefined));
const MEDIA_VIDEO_MAX_BYTES = Number(publishing.MEDIA_VIDEO_MAX_BYTES.parse(undefined));
/** Where a file arrives in one request (a form, a tus PATCH). */
const UPLOAD_PATHS = ['/v1/media', '/v1/embed/media', '/v1/uploads/up_1', '/v1/embed/uploads/up_1'];

/** `16m` → bytes, as ingress-nginx reads proxy-body-size. */
const bytes = (size: string) =>
  Number.parseInt(size, 10) * ({ k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[size.slice(-1)] ?? 1);

/** The Ingress (or route rule) that serves a path: the longest matching one, as both APIs choose. */
function ingressFor(ingresses: K8sObject[], requestPath: string) {
  const candidates = ingresses.flatMap((ingress) =>
    ingress.spec.rules.flatMap(
      (rule: { http: { paths: { path: string; pathType: string; backend: unknown }[] } }) =>
        rule.http.paths
          .filter((p) => (p.pathType === 'Exact' ? requestPath === p.path : requestPath.startsWith(p.path)))
          .map((p) => ({ ingress, path: p })),
    ),
  );
  return candidates.sort((a, b) => b.path.path.length - a.path.path.length)[0];
}

describe('deploy/k8s/examples', () => {
  // Guarantee: the example Ingress gives the gateway what it needs: every path routed to it
  // (/webhooks/meta public), reads longer than its 30 s deadline, a body limit above the media
  // limit, no buffering and no deadline on the event stream and MCP, and on the upload paths a
  // video's size, unbuffered, with reads and sends longer than the upload deadline.
  it('routes the gateway through ingress-nginx with its timeouts, body limit and streaming', () => {
    const ingresses = load('ingress-nginx.yaml');
    expect(ingresses.map(schemaProblem).filter(Boolean)).toEqual([]);
    for (const requestPath of ['/v1/posts', '/webhooks/meta', '/mcp', '/v1/embed/stream', '/connect/abc']) {
      const match = ingressFor(ingresses, requestPath);
      expect(match?.path.backend, requestPath).toEqual({
        service: { name: 'gateway', port: { name: 'http' } },
      });
      const annotations = match?.ingress.metadata.annotations ?? {};
      expect(
        Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']),
        requestPath,
      ).toBeGreaterThan(REQUEST_TIMEOUT_S);
      expect(bytes(annotations['nginx.ingress.kubernetes.io/proxy-body-size']), requestPath).toBeGreaterThan(
        MEDIA_MAX_BYTES,
      );
      const streaming = ['/mcp', '/v1/embed/stream'].includes(requestPath);
      expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering'], requestPath).toBe(
        streaming ? 'off' : undefined,
      );
    }
    for (const requestPath of UPLOAD_PATHS) {
      const match = ingressFor(ingresses, requestPath);
      expect(match?.path.backend, requestPath).toEqual({
        service: { name: 'gateway', port: { name: 'http' } },
      });
      const annotations = match?.ingress.metadata.annotations ?? {};
      for (const timeout of ['proxy-read-timeout', 'proxy-send-timeout'])
        expect(Number(annotations[`nginx.ingress.kubernetes.io/${timeout}`]), requestPath).toBeGreaterThan(
          UPLOAD_TIMEOUT_S,
        );
      expect(bytes(annotations['nginx.ingress.kubernetes.io/proxy-body-size']), requestPath).toBeGreaterThan(
        MEDIA_VIDEO_MAX_BYTES,
      );
      expect(annotations['nginx.ingress.kubernetes.io/proxy-request-buffering'], requestPath).toBe('off');
    }
  });

  // Guarantee: the Gateway API route sends every path to the gateway's Service, with a request
  // timeout above the gateway's deadline (above the upload deadline on the upload paths), and
  // none on the streams.
  it('routes the gateway through an HTTPRoute with its timeouts', () => {
    const [route] = load('httproute.yaml');
    expect(route?.apiVersion).toBe('gateway.networking.k8s.io/v1');
    const rules = route?.spec.rules as {
      matches: { path: { type: string; value: string } }[];
      timeouts: { request: string };
      backendRefs: unknown[];
    }[];
    const ruleFor = (requestPath: string) =>
      rules
        .flatMap((rule) => rule.matches.map((m) => ({ rule, m })))
        .filter(({ m }) =>
          m.path.type === 'Exact' ? m.path.value === requestPath : requestPath.startsWith(m.path.value),
        )
        .sort((a, b) => b.m.path.value.length - a.m.path.value.length)[0]?.rule;
    for (const requestPath of ['/v1/posts', '/webhooks/meta', '/mcp', '/v1/embed/stream', ...UPLOAD_PATHS]) {
      const rule = ruleFor(requestPath);
      expect(rule?.backendRefs, requestPath).toEqual([{ name: 'gateway', port: 80 }]);
      const seconds = Number.parseInt(rule?.timeouts.request ?? '', 10);
      if (['/mcp', '/v1/embed/stream'].includes(requestPath)) expect(seconds, requestPath).toBe(0);
      else if (UPLOAD_PATHS.includes(requestPath))
        expect(seconds, requestPath).toBeGreaterThan(UPLOAD_TIMEOUT_S);
      else expect(seconds, requestPath).toBeGreaterThan(REQUEST_TIMEOUT_S);
    }
  });

  // Guarantee: Prometheus Operator users scrape every role's ops port.
  it('scrapes every role through a PodMonitor on the ops port', () => {
    const [monitor] = load('pod-monitors.yaml');
    expect(monitor?.kind).toBe('PodMonitor');
    expect(monitor?.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/part-of': 'social-publishing' });
    expect(monitor?.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'ops', path: '/metrics' }),
    ]);
  });
});
