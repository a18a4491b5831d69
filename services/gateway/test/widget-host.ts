import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A partner's page on its own origin (another port of 127.0.0.1, or `localhost` for an origin the
 * session does not allow), as a partner's server would render it: the token minted server-side
 * is written into the page, which includes widget.js from the gateway and mounts the widget.
 * Every event the widget sends is collected in `window.widgetEvents`, with the time since the
 * page started loading (`at`, ms).
 */
export interface HostPage {
  surface: 'connect' | 'inbox' | 'publish';
  token?: string;
  /** The size of each part a video is uploaded in (widget.js's mount option). */
  uploadChunkBytes?: number;
  /** Frame this URL directly instead of mounting (what a page outside allowed_origins might try). */
  frameUrl?: string;
}

const EVENTS = [
  'ready',
  'account.connected',
  'account.disconnected',
  'message.sent',
  'post.created',
  'session.expired',
  'resize',
];

export class HostServer {
  private readonly pages = new Map<string, HostPage>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly gatewayUrl: string,
  ) {}

  static async start(gatewayUrl: string): Promise<HostServer> {
    let host: HostServer | undefined;
    const server = createServer((request, response) => {
      const page = host?.pages.get(new URL(request.url ?? '/', 'http://x').pathname.slice(1));
      if (!page || !host) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(host.render(page));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = new HostServer(server, (server.address() as AddressInfo).port, gatewayUrl);
    return host;
  }

  /** The origin the sessions allow. */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Registers a page; answers its URL on `origin` (or on another host name of this server). */
  page(name: string, page: HostPage, hostname = '127.0.0.1'): string {
    this.pages.set(name, page);
    return `http://${hostname}:${this.port}/${name}`;
  }

  private render(page: HostPage): string {
    const body = page.frameUrl
      ? `<iframe title="Widget" src="${page.frameUrl}"></iframe>`
      : `<div id="widget"></div>
<script src="${this.gatewayUrl}/embed/widget.js"></script>
<script>
const widget = SocialWidget.mount(document.getElementById('widget'), ${JSON.stringify({ token: page.token, surface: page.surface, uploadChunkBytes: page.uploadChunkBytes })});
for (const name of ${JSON.stringify(EVENTS)}) widget.on(name, (data) => window.widgetEvents.push({ name, data, at: performance.now() }));
</script>`;
    return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partner product</title></head>
<body><main><h1>Partner product</h1><script>window.widgetEvents = [];</script>${body}</main></body></html>`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
