import type { z } from 'zod';
import { type MatrixRow, PERMISSIONS } from '../auth/permissions.ts';
import type { AnyOperation } from '../operations/operation.ts';
import type { SchemaComponents } from './openapi-schemas.ts';

/**
 * Operation names where the rule below reads poorly (an action rather than a resource, a collection
 * whose name is not a plural). Keyed by method and path, so a route keeps its name in the SDK
 * until someone decides to change it here.
 */
const OPERATION_IDS: Record<string, string> = {
  'POST /v1/workspaces/:id/connect-links': 'createConnectLink',
  'POST /v1/accounts/:id/refresh': 'refreshAccount',
  'POST /v1/accounts/:id/inbox-sync': 'syncAccountInbox',
  'GET /v1/accounts/:id/publishing-limit': 'getPublishingLimit',
  'POST /v1/media': 'uploadMedia',
  'GET /v1/media': 'listMedia',
  'POST /v1/posts/:id/publish': 'publishPost',
  'GET /v1/conversations/:id/messages': 'listMessages',
  'POST /v1/conversations/:id/messages': 'sendMessage',
  'POST /v1/messages/:id/private-reply': 'sendPrivateReply',
  'PUT /v1/webhook': 'setWebhook',
  'POST /v1/webhook/test': 'testWebhook',
  'POST /v1/events/:id/redeliver': 'redeliverEvent',
};

/** The tag (a section of the docs page) by the first segment after /v1. */
const TAGS: Record<string, string> = {
  workspaces: 'Workspaces',
  accounts: 'Accounts',
  media: 'Media',
  posts: 'Posts',
  conversations: 'Inbox',
  messages: 'Inbox',
  webhook: 'Webhooks',
  events: 'Events',
  embed: 'Embed',
  'embed-sessions': 'Embed',
};

export const TAG_DESCRIPTIONS: Record<string, string> = {
  Workspaces: 'Workspaces (one per customer of the partner) and their workspace keys.',
  Accounts: 'Connect links and the network accounts connected through them.',
  Media: 'Images to publish: uploaded, or fetched from a URL.',
  Posts: 'Posts to one or more accounts: now, at schedule_at, or as drafts.',
  Inbox: 'Direct messages and comment threads, and answering them.',
  Webhooks: "The partner's webhook: where events are delivered, signed.",
  Events: 'The event feed, and the delivery attempts of each event.',
  Embed: 'What the embeddable widget calls, with an embed session (sve_…).',
};

const literals = (url: string) => url.split('/').slice(2);

export function tagOf(route: AnyOperation): string {
  const first = literals(route.url)[0] ?? '';
  return TAGS[first] ?? pascal(first);
}

/**
 * `listPosts`, `createPost`, `getConversation`...: the verb from the method and whether the path
 * ends at a collection or an item, the nouns from the path's segments (singular before an id).
 */
function operationIdOf(route: AnyOperation): string {
  const named = OPERATION_IDS[`${route.method} ${route.url}`];
  if (named) return named;
  const segments = literals(route.url);
  const endsWithId = segments.at(-1)?.startsWith(':') ?? false;
  const nouns = segments
    .map((segment, index) => ({ segment, beforeId: segments[index + 1]?.startsWith(':') ?? false }))
    .filter(({ segment }) => !segment.startsWith(':'));
  const collection = !endsWithId && nouns.at(-1)?.segment.endsWith('s');
  const verb = {
    GET: endsWithId || !collection ? 'get' : 'list',
    POST: 'create',
    PUT: 'set',
    PATCH: 'update',
    DELETE: 'delete',
  }[route.method];
  const words = nouns.map(({ segment, beforeId }, index) => {
    const last = index === nouns.length - 1;
    return pascal(beforeId || (last && route.method !== 'GET') ? singular(segment) : segment);
  });
  return `${verb}${words.join('')}`;
}

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

function pascal(text: string): string {
  return text.replace(/(^|-)([a-z])/g, (_match, _dash, letter: string) => letter.toUpperCase());
}

/** The OpenAPI operation of one route: its parameters, body, success and error answers. */
export function operationOf(route: AnyOperation, schemas: SchemaComponents): Record<string, unknown> {
  const matrix: MatrixRow = PERMISSIONS[route.permission];
  const surface = matrix.surfaces ? ` (surface ${matrix.surfaces.join(' or ')})` : '';
  return {
    operationId: operationIdOf(route),
    tags: [tagOf(route)],
    summary: route.summary,
    description: `Access: partner key ${matrix.partner}; workspace key ${matrix.workspace}; embed session ${matrix.embed}${surface}.`,
    parameters: [
      ...objectParameters(route.params, 'path', schemas),
      ...objectParameters(route.query, 'query', schemas),
      ...(route.method === 'POST' ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      { $ref: '#/components/parameters/RequestId' },
    ],
    ...(route.body ? { requestBody: requestBody(route, schemas) } : {}),
    responses: { ...successResponses(route, schemas), ...errorResponses(route) },
  };
}

function requestBody(route: AnyOperation, schemas: SchemaComponents) {
  const content: Record<string, unknown> = {
    'application/json': { schema: schemas.convert(route.body as z.ZodType, 'input') },
  };
  if (route.formBody) content['multipart/form-data'] = { schema: schemas.convert(route.formBody, 'input') };
  return { required: true, content };
}

const SUCCESS_HEADERS = {
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

function successResponses(route: AnyOperation, schemas: SchemaComponents) {
  const headers =
    route.method === 'POST'
      ? { ...SUCCESS_HEADERS, 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
      : SUCCESS_HEADERS;
  const answer = route.streams
    ? {
        description: 'a stream of Server-Sent Events',
        headers,
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      }
    : route.response
      ? {
          description: 'success',
          headers,
          content: { 'application/json': { schema: schemas.convert(route.response, 'output') } },
        }
      : { description: 'success, empty body', headers };
  const statuses = [route.status, ...(route.alternateStatus ?? [])];
  return Object.fromEntries(statuses.map((status) => [String(status), answer]));
}

/**
 * The refusals a route can answer (spec 7): 400, 401, 403, 429 and our own 503 everywhere, 404
 * where the path names an object, 409 where the call changes something (state conflicts, an
 * Idempotency-Key reused with another body), 502 where a POST may call the network.
 */
function errorResponses(route: AnyOperation) {
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  return {
    '400': ref('BadRequest'),
    '401': ref('Unauthorized'),
    '403': ref('Forbidden'),
    ...(route.url.includes('/:') ? { '404': ref('NotFound') } : {}),
    ...(route.method !== 'GET' ? { '409': ref('Conflict') } : {}),
    '429': ref('RateLimited'),
    ...(route.method === 'POST' ? { '502': ref('NetworkError') } : {}),
    '503': ref('ServiceUnavailable'),
    default: ref('InternalError'),
  };
}

function objectParameters(
  schema: z.ZodType | undefined,
  location: 'path' | 'query',
  schemas: SchemaComponents,
) {
  if (!schema) return [];
  const json = schemas.convert(schema, 'input') as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    ...(property.description ? { description: property.description } : {}),
    schema: property,
  }));
}
