import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Logger } from '@svc/logging';
import { z } from 'zod';
import { enforcePermission } from '../auth/permissions.ts';
import { toServiceError } from '../http/errors.ts';
import { type Idempotency, idempotencyKeyHeader } from '../http/idempotency.ts';
import { queryFlags } from '../http/schemas.ts';
import { parseInput } from '../http/validation.ts';
import { type AnyOperation, perform, type ToolDoor } from '../operations/operation.ts';
import type { McpCaller } from './auth.ts';

type Shape = Record<string, z.ZodType>;
type Part = 'query' | 'body';

/**
 * One MCP tool: a door of one operation (`tools` in its declaration). Its arguments are the
 * operation's query and body fields (the workspace aside: it is the request's), the path id as
 * `idArg`, and `idempotency_key` on every write; its output schema is the operation's response.
 */
export interface Tool {
  door: ToolDoor;
  operation: AnyOperation;
  args: z.ZodObject<Shape>;
  /** Which part of the operation's input each argument belongs to. */
  partOf: Map<string, Part>;
  takesIdempotencyKey: boolean;
}

/** What running a tool needs beyond its caller. */
export interface ToolDeps {
  idempotency: Idempotency;
  logger: Logger;
}

/** `Idempotency-Key` of REST, as an argument: the same key and arguments give the first answer again. */
const idempotencyKeyArg = idempotencyKeyHeader
  .optional()
  .describe(
    'makes retrying safe: the same key and arguments within 24 h answer the first result instead of doing it twice; the same key with other arguments is a conflict',
  );

/** Every tool of the operation table. */
export function toolsOf(operations: AnyOperation[]): Tool[] {
  return operations.flatMap((operation) => (operation.tools ?? []).map((door) => toolOf(operation, door)));
}

function toolOf(operation: AnyOperation, door: ToolDoor): Tool {
  const shape: Shape = {};
  const partOf = new Map<string, Part>();
  const skipped = new Set([...(door.omit ?? []), ...Object.keys(door.preset ?? {})]);
  for (const part of ['query', 'body'] as const) {
    const schema = operation[part];
    if (!(schema instanceof z.ZodObject)) continue;
    for (const [name, field] of Object.entries(schema.shape as Shape)) {
      if (skipped.has(name) || (name === 'workspace' && operation.workspaceIn === part)) continue;
      if (partOf.has(name)) throw new Error(`${door.name}: "${name}" is both a query and a body field`);
      shape[name] = part === 'query' ? jsonArgument(field) : field;
      partOf.set(name, part);
    }
  }
  if (door.idArg) shape[door.idArg] = (operation.params as z.ZodObject<Shape>).shape.id as z.ZodType;
  const takesIdempotencyKey = operation.method === 'POST' && !door.readOnly;
  if (takesIdempotencyKey) shape.idempotency_key = idempotencyKeyArg;
  const required = Object.fromEntries((door.require ?? []).map((name) => [name, true] as const));
  const args = z.strictObject(shape).required(required as never) as z.ZodObject<Shape>;
  return { door, operation, args, partOf, takesIdempotencyKey };
}

/** A query flag (`"true"`/`"false"` in a URL) is a JSON boolean as an argument. */
function jsonArgument(field: z.ZodType): z.ZodType {
  const flag = queryFlags.get(field);
  return flag ? z.boolean().optional().describe(flag.description) : field;
}

/**
 * The schema the SDK advertises in `tools/list`, whose own check lets every argument through:
 * the tool validates with the operation's schemas itself, so a refusal is the spec's envelope
 * with `field` (the SDK's own check would answer a free-text message instead). The JSON Schema is
 * converted once per tool, not once per request (each request builds a fresh server).
 */
function advertised(schema: z.ZodType): StandardSchemaWithJSON {
  const standard = schema['~standard'] as StandardSchemaWithJSON['~standard'];
  const converted = new Map<string, Record<string, unknown>>();
  const once =
    (io: 'input' | 'output') =>
    (options: Parameters<typeof standard.jsonSchema.input>[0]): Record<string, unknown> => {
      const key = `${io}:${options.target}`;
      let json = converted.get(key);
      if (!json) {
        json = standard.jsonSchema[io](options);
        converted.set(key, json);
      }
      return json;
    };
  return {
    '~standard': {
      ...standard,
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: once('input'), output: once('output') },
    },
  };
}

/** What the SDK registers for a tool, built once: the advertised schemas. */
interface Advertised {
  inputSchema: StandardSchemaWithJSON;
  outputSchema: StandardSchemaWithJSON;
}
const advertisedOf = new WeakMap<Tool, Advertised>();

function advertise(tool: Tool): Advertised {
  let known = advertisedOf.get(tool);
  if (!known) {
    const output = tool.operation.response ?? z.object({});
    known = { inputSchema: advertised(tool.args), outputSchema: advertised(output) };
    advertisedOf.set(tool, known);
  }
  return known;
}

/**
 * What a tool answers: the JSON as text (for clients that read only text) and as structured
 * content, parsed once. A refusal is `isError` with the error envelope as JSON text only: clients
 * check structured content against the tool's output schema (the MCP Inspector does, errors
 * included), which an envelope does not match.
 */
function answer(text: string): CallToolResult {
  const json = text ? JSON.parse(text) : {};
  return { content: [{ type: 'text', text: text || '{}' }], structuredContent: json };
}

function refusal(envelope: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(envelope) }], isError: true };
}

/**
 * The operation's input from the arguments: the path id checked as REST checks a path (one that
 * cannot exist is not found), the rest with the operation's own field schemas, and the request's
 * workspace where REST names one.
 */
function inputOf(tool: Tool, caller: McpCaller, raw: unknown) {
  const { door, operation } = tool;
  const args = (raw ?? {}) as Record<string, unknown>;
  let params: Record<string, unknown> = {};
  // The path id first, as REST checks it: one that cannot exist is not found, not a bad argument.
  if (door.idArg)
    params = parseInput<Record<string, unknown>>(operation.params, { id: args[door.idArg] }, 'path');
  const parsed = parseInput(tool.args, args, 'body');
  const input = { query: {} as Record<string, unknown>, body: {} as Record<string, unknown> };
  for (const [name, value] of Object.entries(door.preset ?? {}))
    input[operation.query?.shape?.[name] ? 'query' : 'body'][name] = value;
  for (const [name, part] of tool.partOf) if (parsed[name] !== undefined) input[part][name] = parsed[name];
  const where = operation.workspaceIn;
  if (where === 'params') params = { id: caller.workspaceId };
  else if (where) input[where].workspace = caller.workspaceId;
  const key = tool.takesIdempotencyKey ? (parsed.idempotency_key as string | undefined) : undefined;
  return { params, ...input, key };
}

/** Runs one call as REST runs a request: the matrix for the key, the parsed input, the operation once per key. */
async function runTool(tool: Tool, caller: McpCaller, raw: unknown, deps: ToolDeps): Promise<CallToolResult> {
  try {
    const { operation } = tool;
    const { params, query, body, key } = inputOf(tool, caller, raw);
    enforcePermission(operation.permission, caller.key, params.id ?? caller.workspaceId, caller.workspaceId);
    const ctx = { principal: caller.scoped, origin: 'mcp' as const, params, query, body };
    const performed = tool.takesIdempotencyKey
      ? await deps.idempotency.run(
          {
            key,
            called: `mcp:${tool.door.name}`,
            principal: caller.scoped,
            asked: [params, query, body],
            log: deps.logger,
          },
          (claim) => perform(operation, { ...ctx, idempotency: claim }),
        )
      : await perform(operation, { ...ctx, idempotency: undefined });
    return answer(performed.text);
  } catch (error) {
    const refused = toServiceError(error as Error);
    if (refused.code === 'internal_error' || refused.code === 'service_unavailable') {
      deps.logger.error({ err: error, tool: tool.door.name }, 'mcp tool failed');
    }
    return refusal({ error: refused.toBody() });
  }
}

export function registerTools(server: McpServer, tools: Tool[], caller: McpCaller, deps: ToolDeps): void {
  for (const tool of tools) {
    const { name, title, description, readOnly } = tool.door;
    server.registerTool(
      name,
      {
        title,
        description,
        ...advertise(tool),
        annotations: { readOnlyHint: readOnly ?? false, openWorldHint: !readOnly },
      },
      (args: unknown) => runTool(tool, caller, args, deps),
    );
  }
}
