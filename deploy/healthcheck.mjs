// The image's HEALTHCHECK: 0 when the service answers its health URL with 200, else 1.
// The ports are the services' OPS_PORT defaults (deploy/test checks they match the config schemas).
export const DEFAULT_OPS_PORTS = {
  gateway: 9100,
  identity: 9101,
  accounts: 9102,
  publishing: 9103,
  webhooks: 9104,
  inbox: 9105,
};

/**
 * The graph-sandbox (development's stand-in for Meta) has no ops port: it is asked on its own port
 * for a static avatar, which it answers without touching its state.
 */
const SANDBOX = { portVariable: 'GRAPH_SANDBOX_PORT', port: 8090, path: '/__sandbox/avatar/health.gif' };

/** The URL that tells whether this container's service is up. */
export function healthUrl(service, env) {
  if (service === 'graph-sandbox')
    return `http://127.0.0.1:${env[SANDBOX.portVariable] ?? SANDBOX.port}${SANDBOX.path}`;
  const port = env.OPS_PORT ?? DEFAULT_OPS_PORTS[service];
  return port ? `http://127.0.0.1:${port}/healthz` : undefined;
}

if (process.argv[1]?.endsWith('healthcheck.mjs')) {
  const url = healthUrl(process.env.SERVICE ?? '', process.env);
  if (!url) process.exit(1);
  fetch(url, { signal: AbortSignal.timeout(2_500) }).then(
    (response) => process.exit(response.ok ? 0 : 1),
    () => process.exit(1),
  );
}
