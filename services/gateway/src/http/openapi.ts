import { ERROR_CODES } from '@svc/errors';
import { z } from 'zod';
import { PERMISSIONS } from '../auth/permissions.ts';
import { idempotencyKeyHeader } from './idempotency.ts';
import type { AnyRoute } from './route.ts';

const errorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      field: z.string().optional().describe('present for validation_error'),
      details: z.record(z.string(), z.unknown()).optional().describe('present for network_error'),
    }),
  })
  .meta({ id: 'Error' });

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });

/** The OpenAPI 3.1 document, generated from the same zod declarations that validate requests. */
export function buildOpenApi(routes: AnyRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([a-z_]+)/g, '{$1}');
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Social Publishing and Inbox Service',
      version,
      description: 'Every /v1 call carries `Authorization: Bearer <key>`. Errors use the envelope `Error`.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: jsonSchema(errorEnvelope, 'output') },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function operation(route: AnyRoute): Record<string, unknown> {
  const parameters = [
    ...objectParameters(route.params, 'path'),
    ...objectParameters(route.query, 'query'),
    ...(route.method === 'POST'
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: jsonSchema(idempotencyKeyHeader, 'input'),
          },
        ]
      : []),
  ];
  const matrix = PERMISSIONS[route.permission];
  const responses: Record<string, unknown> = {
    [route.status]: route.streams
      ? {
          description: 'a stream of Server-Sent Events',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        }
      : route.response
        ? {
            description: 'success',
            content: { 'application/json': { schema: jsonSchema(route.response, 'output') } },
          }
        : { description: 'success, empty body' },
    default: {
      description: 'error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  };
  for (const status of route.alternateStatus ?? []) responses[status] = responses[route.status];
  const surface = 'surface' in matrix ? ` (surface ${matrix.surface})` : '';
  return {
    ...(route.tag ? { tags: [route.tag] } : {}),
    summary: route.summary,
    description: `Access: partner key ${matrix.partner}; workspace key ${matrix.workspace}; embed session ${matrix.embed}${surface}.`,
    parameters,
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: jsonSchema(route.body, 'input') },
              ...(route.formBody
                ? { 'multipart/form-data': { schema: jsonSchema(route.formBody, 'input') } }
                : {}),
            },
          },
        }
      : {}),
    responses,
  };
}

function objectParameters(schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}

/** A self-contained docs page (no external script or style) rendered from the document. */
export function renderDocs(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, { summary: string; description: string }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, ops]) =>
      Object.entries(ops).map(
        ([method, op]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary)}<br><small>${escapeHtml(op.description)}</small></td></tr>`,
      ),
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>API reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}td{padding:.4rem;border-bottom:1px solid #ddd;vertical-align:top}small{color:#555}</style>
</head><body><h1>API reference</h1><p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Purpose</th></tr></thead><tbody>${rows}</tbody></table></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
