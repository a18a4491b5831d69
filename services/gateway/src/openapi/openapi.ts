import { EVENT_DATA, type EventType, eventSchemas } from '@svc/contracts/public';
import type { AnyOperation } from '../operations/operation.ts';
import { sharedComponents } from './openapi-components.ts';
import { MCP_TAG, mcpPath } from './openapi-mcp.ts';
import { operationOf, TAG_DESCRIPTIONS, tagOf } from './openapi-operation.ts';
import { SchemaComponents } from './openapi-schemas.ts';
import { UPLOADS_TAG, uploadPaths } from './openapi-uploads.ts';

/**
 * The OpenAPI 3.1 document, generated from the same zod declarations that validate requests, and
 * usable by tools: shared records in `components.schemas`, an operationId per operation (the SDK's
 * method names), every refusal with the error envelope, and the events under `webhooks`. A test
 * lints it with Redocly's recommended rules; the SDK's types are generated from it.
 */
/** The version of the REST interface the document describes (spec 9: everything under /v1). */
export const API_VERSION = '1.0.0';

export function buildOpenApi(routes: AnyOperation[], version: string): Record<string, unknown> {
  const schemas = new SchemaComponents();
  const shared = sharedComponents(schemas);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([a-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route, schemas);
  }
  const webhooks = webhookOperations(schemas);
  Object.assign(paths, uploadPaths(schemas));
  paths['/mcp'] = mcpPath();
  const tags = [...new Set(routes.map(tagOf))].map((name) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? name,
  }));
  tags.push(UPLOADS_TAG, MCP_TAG);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Social Publishing and Inbox Service',
      version,
      description:
        'Every /v1 call carries `Authorization: Bearer <key>`. Refusals carry the envelope `Error`; every answer carries the X-RateLimit-* headers and X-Request-Id.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'this gateway' }],
    tags,
    security: [{ bearer: [] }],
    paths,
    webhooks,
    components: { schemas: schemas.schemas, ...shared },
  };
}

const DELIVERY_HEADERS: [string, string][] = [
  ['X-Service-Event', 'the event type'],
  ['X-Service-Delivery', 'the event id; de-duplicate by it'],
  ['X-Service-Timestamp', 'Unix seconds at sending'],
  [
    'X-Service-Signature',
    '`sha256=<hex>`: HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>` keyed with the webhook secret',
  ],
];

/** What we POST to the partner's webhook URL, one entry per event type (spec 6). */
function webhookOperations(schemas: SchemaComponents): Record<string, unknown> {
  const entries = (Object.keys(EVENT_DATA) as EventType[]).map((type) => {
    const schema = schemas.convert(eventSchemas[type], 'output');
    return [
      type,
      {
        post: {
          operationId: `on${type.replace(/(^|[._])([a-z])/g, (_m, _s, letter: string) => letter.toUpperCase())}`,
          tags: ['Webhooks'],
          summary: `The ${type} event, delivered to the webhook URL`,
          security: [],
          parameters: DELIVERY_HEADERS.map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: {
            '200': { description: 'any 2xx acknowledges the delivery; the body is ignored' },
            '4XX': {
              description:
                'any other status, a timeout or a refused connection is retried (6 attempts in about 15 hours)',
            },
          },
        },
      },
    ];
  });
  return Object.fromEntries(entries);
}
