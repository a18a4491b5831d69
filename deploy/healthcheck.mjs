// The image's HEALTHCHECK: 0 when the service's ops port answers /healthz with 200, else 1.
// The ports are the services' OPS_PORT defaults (deploy/test checks they match the config schemas).
export const DEFAULT_OPS_PORTS = {
  gateway: 9100,
  identity: 9101,
  accounts: 9102,
  publishing: 9103,
  webhooks: 9104,
  inbox: 9105,
};

if (process.argv[1]?.endsWith('healthcheck.mjs')) {
  const port = process.env.OPS_PORT ?? DEFAULT_OPS_PORTS[process.env.SERVICE ?? ''];
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_500) }).then(
    (response) => process.exit(response.ok ? 0 : 1),
    () => process.exit(1),
  );
}
