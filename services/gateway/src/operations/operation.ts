import type { IdempotencyClaim } from '@svc/contracts';
import type { RequestOrigin } from '@svc/contracts/public';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { PermissionRow } from '../auth/permissions.ts';
import type { Principal } from '../auth/principal.ts';
import type { Performed } from '../http/idempotency.ts';
import { JsonText } from '../http/json-text.ts';

type AnyObject = z.ZodType<Record<string, unknown>>;

/** Where an operation names the workspace it acts in; the widget and MCP fill it from their caller. */
type WorkspacePart = 'params' | 'query' | 'body';

/**
 * One operation of the public API, declared once: its REST path and permission row, its input
 * schemas, the one service call (`run`) and the public view it answers. The three front doors are
 * derived from it: the REST route (`http/rest-route.ts`), the widget's route when `widget` is set
 * (`embed/widget-route.ts`) and the MCP tools in `tools` (`mcp/tool.ts`). Permission checks,
 * input validation and idempotency wrap `run` the same way at each door.
 */
export interface Operation<P extends AnyObject, Q extends AnyObject, B extends AnyObject> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  permission: PermissionRow;
  params?: P;
  query?: Q;
  body?: B;
  /** The part of the request that names the workspace (`/v1/workspaces/:id/...`, `?workspace=`). */
  workspaceIn?: WorkspacePart;
  /** Success status; 204 has no body. */
  status: number;
  response?: z.ZodType;
  /** Extra statuses `run` may choose with `answer` (for example 200 for an existing workspace). */
  alternateStatus?: number[];
  /**
   * Fastify setup that this route alone needs (the multipart parsing of uploads). The route is
   * then registered in its own encapsulated scope, so the rest of the gateway stays JSON-only.
   */
  scope?: (instance: FastifyInstance) => Promise<void>;
  /** A multipart/form-data body the route accepts besides JSON (for the OpenAPI document). */
  formBody?: z.ZodType;
  /**
   * What a POST asks beyond its parsed query and body, for the Idempotency-Key comparison (an
   * uploaded file's digest), so another file under the same key is a conflict, not a replay.
   */
  fingerprint?: (request: FastifyRequest) => unknown;
  /** `run` answers a stream (Server-Sent Events): it sets the headers and its result is sent as it is. */
  streams?: boolean;
  /** The widget's version: the same operation at its `/v1/embed/*` path, for an embed session. */
  widget?: WidgetDoor;
  /** The MCP tools that call this operation (one, or a few presets of it such as `dry_run_post`). */
  tools?: ToolDoor[];
  run(ctx: OperationContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<unknown>;
}

interface WidgetDoor {
  url: string;
  permission: PermissionRow;
}

export interface ToolDoor {
  name: string;
  title: string;
  description: string;
  /** The argument that carries the path id (`post_id` for `/v1/posts/:id`). */
  idArg?: string;
  /** Reads only (`readOnlyHint`); the rest change something (and a few reach the network). */
  readOnly?: boolean;
  /** Query or body fields the tool fixes (`dry_run: true`); they are not arguments. */
  preset?: Record<string, unknown>;
  /** Query or body fields the tool does not offer. */
  omit?: string[];
  /** Optional fields the tool requires (an agent has no file to upload, so `url`). */
  require?: string[];
}

interface OperationContext<P, Q, B> {
  principal: Principal;
  /** Which front door the request came through, as the services record it (`created_by`, `source`). */
  origin: RequestOrigin;
  params: P;
  query: Q;
  body: B;
  /** Set for a write with an idempotency key, for a service that keeps its own claim (posts, sends). */
  idempotency: IdempotencyClaim | undefined;
  /** The HTTP exchange, at the REST and widget doors only (uploads, event streams). */
  http?: { request: FastifyRequest; reply: FastifyReply };
}

// biome-ignore lint/suspicious/noExplicitAny: a table of operations with different schemas
export type AnyOperation = Operation<any, any, any>;

export type AnyOperationContext = OperationContext<
  Record<string, unknown>,
  Record<string, unknown>,
  Record<string, unknown>
>;

export function defineOperation<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(
  operation: Operation<P, Q, B>,
): Operation<P, Q, B> {
  return operation;
}

/**
 * A result with more than its value: another of the operation's statuses, or `replayed` when the
 * owning service answered a retried write from its own claim (`Idempotent-Replayed` over REST).
 */
export class Answered {
  constructor(
    readonly value: unknown,
    readonly status: number | undefined,
    readonly replayed: boolean,
  ) {}
}

export const answered = (value: unknown, how: { status?: number; replayed?: boolean }): Answered =>
  new Answered(value, how.status, how.replayed ?? false);

/** Runs the operation once and renders its result: JSON text, the status, whether it was a replay. */
export async function perform(operation: AnyOperation, ctx: AnyOperationContext): Promise<Performed> {
  const result = await operation.run(ctx);
  const { value, status, replayed } =
    result instanceof Answered ? result : { value: result, status: undefined, replayed: false };
  const answerStatus = status ?? operation.status;
  if (answerStatus === 204) return { status: answerStatus, text: '', replayed };
  const text = value instanceof JsonText ? value.text : JSON.stringify(value);
  return { status: answerStatus, text, replayed };
}
