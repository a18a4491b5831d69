import { z } from 'zod';
import type { PermissionRow } from '../auth/permissions.ts';
import type { AnyRoute, AnyRouteContext } from '../http/route.ts';

/** Where the REST route names the workspace that an embed session fixes instead. */
type WorkspacePart = 'params' | 'query' | 'body';

export interface WidgetVersion {
  url: string;
  permission: PermissionRow;
  /** The part of the REST request that names the workspace; the widget's request leaves it out. */
  workspaceIn?: WorkspacePart;
}

type ObjectSchema = z.ZodObject<Record<string, z.ZodType>>;

/** The schema without its `workspace` field (still strict: a widget naming one is refused). */
function withoutWorkspace(schema: z.ZodType | undefined): z.ZodType | undefined {
  if (!(schema instanceof z.ZodObject)) return schema;
  return (schema as ObjectSchema).omit({ workspace: true });
}

/**
 * The widget's version of a REST route: the same schemas, the same handler and so the same gRPC
 * call, bodies, errors and limits, at its `/v1/embed/*` path under the widget's permission row.
 * The session's workspace fills the part of the request where REST names one.
 */
export function widgetVersion(rest: AnyRoute, version: WidgetVersion): AnyRoute {
  const part = version.workspaceIn;
  return {
    ...rest,
    url: version.url,
    permission: version.permission,
    params: part === 'params' ? undefined : rest.params,
    query: part === 'query' ? withoutWorkspace(rest.query) : rest.query,
    body: part === 'body' ? withoutWorkspace(rest.body) : rest.body,
    formBody: part === 'body' ? withoutWorkspace(rest.formBody) : rest.formBody,
    handler(ctx: AnyRouteContext) {
      const workspace = ctx.principal.workspaceId;
      if (!part || !workspace) return rest.handler(ctx);
      if (part === 'params') return rest.handler({ ...ctx, params: { id: workspace } });
      return rest.handler({ ...ctx, [part]: { ...ctx[part], workspace } });
    },
  };
}

/** The REST route a widget route is the version of, by `METHOD /path`. */
export function restRoute(routes: AnyRoute[], name: string): AnyRoute {
  const found = routes.find((route) => `${route.method} ${route.url}` === name);
  if (!found) throw new Error(`no REST route ${name}`);
  return found;
}
