import { z } from 'zod';
import type { AnyOperation, AnyOperationContext } from '../operations/operation.ts';

type ObjectSchema = z.ZodObject<Record<string, z.ZodType>>;

/** The schema without its `workspace` field (still strict: a widget naming one is refused). */
function withoutWorkspace(schema: z.ZodType | undefined): z.ZodType | undefined {
  if (!(schema instanceof z.ZodObject)) return schema;
  return (schema as ObjectSchema).omit({ workspace: true });
}

/**
 * The widget's door of an operation: the same schemas and `run`, so the same gRPC call, bodies,
 * errors and limits, at its `/v1/embed/*` path under the widget's permission row. The session's
 * workspace fills the part of the request where REST names one.
 */
function widgetRoute(operation: AnyOperation): AnyOperation | undefined {
  const door = operation.widget;
  if (!door) return undefined;
  const part = operation.workspaceIn;
  const { widget: _, tools: __, ...rest } = operation;
  return {
    ...rest,
    url: door.url,
    permission: door.permission,
    params: part === 'params' ? undefined : operation.params,
    query: part === 'query' ? withoutWorkspace(operation.query) : operation.query,
    body: part === 'body' ? withoutWorkspace(operation.body) : operation.body,
    formBody: part === 'body' ? withoutWorkspace(operation.formBody) : operation.formBody,
    run(ctx: AnyOperationContext) {
      const widgetCtx = { ...ctx, origin: 'widget' as const };
      const workspace = ctx.principal.workspaceId;
      if (!part || !workspace) return operation.run(widgetCtx);
      if (part === 'params') return operation.run({ ...widgetCtx, params: { id: workspace } });
      return operation.run({ ...widgetCtx, [part]: { ...ctx[part], workspace } });
    },
  };
}

/** The widget's versions of the operations that have one. */
export function widgetRoutes(operations: AnyOperation[]): AnyOperation[] {
  return operations.flatMap((operation) => widgetRoute(operation) ?? []);
}
