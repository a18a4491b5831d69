import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

/** The docs page and what it loads, all served by the gateway (no key needed for any of them). */
export const DOCS_PATHS = ['/v1/docs', '/v1/docs/reference.js', '/v1/docs/start.js'];

/**
 * Only what the gateway serves may run, and the page may call only the gateway (the viewer's
 * "try it" requests): no third-party CDN, font host or proxy. Scalar sets its styles inline.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference: Social Publishing and Inbox Service</title><link rel="icon" href="data:,"></head>
<body><div id="reference"></div>
<noscript>The reference needs JavaScript; the document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<script src="/v1/docs/reference.js"></script>
<script src="/v1/docs/start.js"></script>
</body></html>`;

/**
 * The system's fonts: Scalar's own (Inter, JetBrains Mono) come from its font host, which
 * `withDefaultFonts: false` alone does not stop (its base styles still name them).
 */
const SYSTEM_FONTS = `:root, .scalar-app, .light-mode, .dark-mode {
  --scalar-font: ui-sans-serif, system-ui, sans-serif !important;
  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace !important;
}`;

/**
 * Scalar's options: the document from this gateway, system fonts, and none of its hosted extras
 * (AI agent, MCP generator, developer toolbar); no request proxy is set, so "try it" calls go
 * straight to the gateway.
 */
const START = `Scalar.createApiReference('#reference', ${JSON.stringify({
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  customCss: SYSTEM_FONTS,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  showOperationId: true,
  documentDownloadType: 'json',
})});`;

/** Scalar's standalone bundle (one self-contained script) from the package, as installed. */
function scalarBundlePath(): string {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return path.join(path.dirname(entry), 'browser', 'standalone.js');
}

export function docsRoutes(app: FastifyInstance): void {
  let bundle: Promise<Buffer> | undefined;
  app.get('/v1/docs', async (_request, reply) =>
    reply
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .type('text/html; charset=utf-8')
      .send(PAGE),
  );
  app.get('/v1/docs/reference.js', async (_request, reply) => {
    bundle ??= readFile(scalarBundlePath());
    return reply
      .header('Cache-Control', 'public, max-age=3600')
      .type('text/javascript; charset=utf-8')
      .send(await bundle);
  });
  app.get('/v1/docs/start.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').send(START),
  );
}
