import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Logger } from '@svc/logging';
import { z } from 'zod';
import { toServiceError } from '../http/errors.ts';
import { JsonText } from '../http/json-text.ts';
import { parseInput } from '../http/validation.ts';
import type { McpCaller } from './auth.ts';

type Shape = z.ZodRawShape;
type IdParams = z.ZodObject<{ id: z.ZodType<string> }>;

/**
 * One MCP tool, mirroring one REST route: the route's own zod schemas (imported from
 * `routes/*.ts`), the same service call, the route's response schema as the output schema.
 * `id` is the path id of the route (`post_id` for `/v1/posts/:id`), checked like a path id: one
 * that cannot exist is `not_found`, as over REST.
 */
interface ToolSpec<I extends Shape> {
  name: string;
  title: string;
  description: string;
  id?: { arg: string; params: IdParams };
  input: z.ZodObject<I>;
  output: z.ZodType;
  /** Reads only (`readOnlyHint`); the rest change something (and a few reach the network). */
  readOnly?: boolean;
  run(call: ToolCall<z.infer<z.ZodObject<I>>>): Promise<unknown>;
}

interface ToolCall<A> {
  caller: McpCaller;
  /** The checked path id, when the tool has one (else ''). */
  id: string;
  args: A;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of tools with different argument shapes
export type AnyTool = ToolSpec<any>;

/** The input of a tool that takes nothing beyond its id: any other argument is refused. */
export const noArgs = z.strictObject({});

export const defineTool = <I extends Shape>(spec: ToolSpec<I>): ToolSpec<I> => spec;

/**
 * The schema the SDK advertises in `tools/list`, whose own check lets every argument through:
 * the tool validates with the REST route's schema itself, so a refusal is the spec's envelope
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

/** What the SDK registers for a tool, built once: the advertised schemas and the annotations. */
interface Advertised {
  inputSchema: StandardSchemaWithJSON;
  outputSchema: StandardSchemaWithJSON;
}
const advertisedOf = new WeakMap<AnyTool, Advertised>();

function advertise(tool: AnyTool): Advertised {
  let known = advertisedOf.get(tool);
  if (!known) {
    known = { inputSchema: advertised(argumentsSchema(tool)), outputSchema: advertised(tool.output) };
    advertisedOf.set(tool, known);
  }
  return known;
}

function argumentsSchema(tool: AnyTool): z.ZodType {
  if (!tool.id) return tool.input;
  return tool.input.extend({ [tool.id.arg]: tool.id.params.shape.id });
}

/**
 * What a tool answers: the JSON as text (for clients that read only text) and as structured
 * content. A record the owning service built as JSON text (`JsonText`, as REST answers it) is
 * that text as it is, parsed once for the structured content. A refusal is `isError` with the
 * error envelope as JSON text only: clients check structured content against the tool's output
 * schema (the MCP Inspector does, errors included), which an envelope does not match.
 */
function answer(value: unknown): CallToolResult {
  if (value instanceof JsonText)
    return { content: [{ type: 'text', text: value.text }], structuredContent: JSON.parse(value.text) };
  const structured = (value ?? {}) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

function refusal(envelope: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(envelope) }], isError: true };
}

/** Runs one call: its arguments checked as REST checks them, any refusal as the spec's envelope. */
async function runTool(
  tool: AnyTool,
  caller: McpCaller,
  raw: unknown,
  logger: Logger,
): Promise<CallToolResult> {
  try {
    const args = { ...((raw ?? {}) as Record<string, unknown>) };
    let id = '';
    if (tool.id) {
      id = parseInput(tool.id.params, { id: args[tool.id.arg] }, 'path').id;
      delete args[tool.id.arg];
    }
    const parsed = parseInput(tool.input, args, 'body');
    return answer(await tool.run({ caller, id, args: parsed }));
  } catch (error) {
    const refused = toServiceError(error as Error);
    if (refused.code === 'internal_error' || refused.code === 'service_unavailable') {
      logger.error({ err: error, tool: tool.name }, 'mcp tool failed');
    }
    return refusal({ error: refused.toBody() });
  }
}

export function registerTools(server: McpServer, tools: AnyTool[], caller: McpCaller, logger: Logger): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        ...advertise(tool),
        annotations: { readOnlyHint: tool.readOnly ?? false, openWorldHint: !tool.readOnly },
      },
      (args: unknown) => runTool(tool, caller, args, logger),
    );
  }
}
