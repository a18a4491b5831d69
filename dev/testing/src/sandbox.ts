import type { RunningSandbox } from '@svc/graph-sandbox';
import { type ServiceChild, startChild } from './child-process.ts';
import type { Addresses } from './wiring.ts';

/** The graph-sandbox's control API (`/__sandbox/...`), JSON in and out. */
export type SandboxControl = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
) => Promise<T>;

export function sandboxControl(sandboxUrl: string): SandboxControl {
  return async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${sandboxUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  };
}

export interface SandboxOptions {
  /** In this process (default: tests reach its world), or from its production bundle. */
  run?: 'in-process' | 'bundle';
  /** How long an Instagram container stays IN_PROGRESS (default 0: ready at once). */
  containerProcessingMs?: number;
  /** Any other variable of the sandbox's config (LOG_LEVEL is `silent` unless set here). */
  env?: Record<string, string>;
}

/**
 * The sandbox's environment in this system: it sends provider webhooks and deauthorize callbacks
 * to the gateway, never retries them (tests count them), and logs nothing.
 */
function sandboxEnv(options: SandboxOptions, port: number, gatewayUrl: string): Record<string, string> {
  return {
    APP_ENV: 'development',
    LOG_LEVEL: 'silent',
    GRAPH_SANDBOX_PORT: String(port),
    SANDBOX_WEBHOOK_URL: `${gatewayUrl}/webhooks/meta`,
    SANDBOX_DEAUTHORIZE_URL: `${gatewayUrl}/webhooks/meta/deauthorize`,
    SANDBOX_CONTAINER_PROCESSING_MS: String(options.containerProcessingMs ?? 0),
    SANDBOX_WEBHOOK_RETRIES: '0',
    ...options.env,
  };
}

/**
 * Starts the sandbox before the services that call it: in this process on a port the OS picks
 * (and `at.sandboxUrl` becomes its URL), or from its bundle at the address already chosen.
 */
export async function startSandbox(
  options: SandboxOptions | false,
  at: Addresses,
  child: { logs: 'capture' | 'stderr'; nodeFlags: string[] },
): Promise<{ running?: RunningSandbox; child?: ServiceChild }> {
  if (options === false) return {};
  if (options.run === 'bundle') {
    const spec = {
      label: 'graph-sandbox',
      folder: 'dev/graph-sandbox',
      entry: 'bundle' as const,
      env: sandboxEnv(options, Number(new URL(at.sandboxUrl).port), at.gatewayUrl),
      readyUrl: `${at.sandboxUrl}/__sandbox/published`,
      ...child,
    };
    return { child: await startChild(spec, []) };
  }
  const { sandboxConfig, startSandbox } = await import('@svc/graph-sandbox');
  const running = await startSandbox(sandboxConfig({}, sandboxEnv(options, 0, at.gatewayUrl)));
  at.sandboxUrl = running.url;
  return { running };
}
