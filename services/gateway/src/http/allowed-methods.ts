/**
 * Which methods each registered path takes, so a request with another method on a path we serve
 * is told which ones to use instead of "no route". Patterns are Fastify's (`/v1/posts/:id`,
 * `/media-files/*`); a trailing slash is ignored, as the router ignores it.
 */
export class AllowedMethods {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(method: string | string[], url: string): void {
    const source = url
      .replace(/\/+$/, '')
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : literal(segment)))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    for (const one of [method].flat()) this.routes.push({ pattern, method: one });
  }

  /** The methods `path` takes, in a stable order (none: no route has this path). */
  at(path: string): string[] {
    const methods = this.routes.filter((route) => route.pattern.test(path)).map((route) => route.method);
    return [...new Set(methods)].sort();
  }
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
