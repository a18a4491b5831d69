import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ServiceClients } from '../src/clients.ts';
import { API_VERSION, buildOpenApi } from '../src/openapi/openapi.ts';
import { openApiDocument } from '../src/openapi/openapi-document.ts';
import { defineOperation } from '../src/operations/operation.ts';
import { httpRoutes, operationTable } from '../src/operations/table.ts';

// The document as the gateway serves it, built from the route table alone (no service running).
const document = () => openApiDocument() as OpenApi;

interface Operation {
  operationId: string;
  parameters: { $ref?: string; in?: string; name?: string }[];
  responses: Record<string, { $ref?: string }>;
}
type OpenApi = Record<string, unknown> & {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
};

/** Redocly's linter (the engine of `redocly lint`) with its recommended rules, problems as lines. */
async function lint(doc: unknown): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
}

const operations = (doc: OpenApi) => Object.values(doc.paths).flatMap((ops) => Object.values(ops));

describe('the OpenAPI document', () => {
  // Guarantee: tools can use the document: Redocly's recommended rules find no error and no
  // warning (every $ref resolves, every operation has an operationId, a summary and a 4xx).
  it('passes the recommended lint rules without a problem', async () => {
    expect(await lint(document())).toEqual([]);
  }, 60_000);

  // Guarantee: the lint above can fail: a dangling reference, as zod's `#/$defs/…` used to be,
  // and a missing operationId are reported.
  it('reports a dangling reference and a missing operationId', async () => {
    const broken = document();
    const getPost = broken.paths['/v1/posts/{id}']?.get as Partial<Operation> & Pick<Operation, 'responses'>;
    getPost.responses['200'] = { $ref: '#/$defs/Post' };
    delete getPost.operationId;
    const problems = await lint(broken);
    expect(problems.some((p) => p.startsWith('error no-unresolved-refs'))).toBe(true);
    expect(problems.some((p) => p.startsWith('warn operation-operationId'))).toBe(true);
  }, 60_000);

  // Guarantee: operationIds (the SDK's method names) are unique and read as verbs on resources.
  it('names every operation once', () => {
    const ids = operations(document()).map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        'listPosts',
        'createPost',
        'getConversation',
        'deleteWorkspaceKey',
        'publishPost',
      ]),
    );
  });

  // Guarantee: every POST takes Idempotency-Key (but the MCP endpoint, whose write tools take an
  // idempotency_key argument, and the tus creation), every call X-Request-Id, and every operation documents its refusals
  // with the error envelope, 429 with Retry-After.
  it('documents the header parameters and every refusal', () => {
    const doc = document();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const refs = op.parameters.map((p) => p.$ref);
        expect(refs).toContain('#/components/parameters/RequestId');
        // Not the tus creation either: one whose answer was lost leaves an empty upload that expires.
        if (method === 'post' && path !== '/mcp' && path !== '/v1/uploads')
          expect(refs).toContain('#/components/parameters/IdempotencyKey');
        expect(op.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
        if (path.includes('{'))
          expect(op.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
      }
    }
    const components = doc.components as {
      responses: Record<string, { headers: Record<string, unknown>; content: unknown }>;
    };
    expect(Object.keys(components.responses.RateLimited?.headers ?? {})).toContain('Retry-After');
    expect(components.responses.NotFound?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    });
  });

  // Guarantee: the MCP endpoint is described with the header a partner key names its workspace in.
  it('documents the MCP endpoint and X-Service-Workspace', () => {
    const op = document().paths['/mcp']?.post as Operation;
    expect(op.operationId).toBe('callMcp');
    expect(op.parameters.map((p) => p.name)).toContain('X-Service-Workspace');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429']));
  });

  // Guarantee: each event type of spec 6 is under `webhooks` with its own payload schema.
  it('describes each webhook event with its payload', () => {
    const doc = document();
    expect(Object.keys(doc.webhooks)).toEqual([
      'ping',
      'account.connected',
      'account.disconnected',
      'account.expired',
      'account.changed',
      'post.published',
      'post.partial',
      'post.failed',
      'message.received',
      'comment.received',
      'message.sent',
      'message.updated',
    ]);
    const connected = doc.webhooks['account.connected']?.post.requestBody.content['application/json'];
    expect(connected?.schema).toEqual({ $ref: '#/components/schemas/AccountConnectedEvent' });
    const schemas = (doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> })
      .schemas;
    expect(schemas.AccountConnectedEvent?.properties.data).toMatchObject({
      properties: { account: { $ref: '#/components/schemas/Account' } },
    });
  });

  // Guarantee: a route added to the table (here a widget route of /v1/embed) is described with a
  // derived operationId and its tag, and the document still lints clean: nothing to register twice.
  it('describes a new route without naming it by hand', async () => {
    const embedMessages = defineOperation({
      method: 'GET',
      url: '/v1/embed/conversations/:id/messages',
      summary: 'List the messages of a conversation in the widget',
      permission: 'objects',
      params: z.strictObject({ id: z.string() }),
      status: 200,
      response: z.object({ data: z.array(z.string()) }),
      run: async () => ({ data: [] }),
    });
    const doc = buildOpenApi(
      [...httpRoutes(operationTable({} as ServiceClients)), embedMessages],
      API_VERSION,
    ) as OpenApi;
    const op = doc.paths['/v1/embed/conversations/{id}/messages']?.get as Operation & { tags: string[] };
    expect(op.operationId).toBe('listEmbedConversationMessages');
    expect(op.tags).toEqual(['Embed']);
    expect(await lint(doc)).toEqual([]);
  }, 60_000);
});
