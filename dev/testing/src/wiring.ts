/** The services a system can start (the light helpers name them without loading any). */
export type ServiceName = 'identity' | 'accounts' | 'webhooks' | 'publishing' | 'inbox' | 'gateway';

/**
 * Where each part of one system listens. gRPC addresses are `host:port`; a service that is not
 * started gets a port nothing listens on, so a call to it fails at once instead of reaching
 * whatever else runs on this machine at its default port.
 */
export interface Addresses {
  identity: string;
  accounts: string;
  webhooks: string;
  publishing: string;
  inbox: string;
  gatewayUrl: string;
  sandboxUrl: string;
  mediaDir: string;
}

/**
 * The variables that wire one service to the others, as `scripts/start.ts` and the deployment
 * wire them; `env` (the system's and the service's own) is laid over them.
 */
export function wiringEnv(
  name: ServiceName,
  at: Addresses,
  listen: string,
  opsPort: string,
): Record<string, string> {
  switch (name) {
    case 'identity':
      return { IDENTITY_GRPC_ADDRESS: listen, OPS_PORT: opsPort };
    case 'webhooks':
      return { WEBHOOKS_GRPC_ADDRESS: listen, OPS_PORT: opsPort };
    case 'accounts':
      return {
        ACCOUNTS_GRPC_ADDRESS: listen,
        OPS_PORT: opsPort,
        IDENTITY_GRPC_URL: at.identity,
        GRAPH_API_BASE_URL: at.sandboxUrl,
        FACEBOOK_DIALOG_URL: at.sandboxUrl,
        PUBLIC_BASE_URL: at.gatewayUrl,
      };
    case 'publishing':
      return {
        PUBLISHING_GRPC_ADDRESS: listen,
        OPS_PORT: opsPort,
        IDENTITY_GRPC_URL: at.identity,
        ACCOUNTS_GRPC_URL: at.accounts,
        GRAPH_API_BASE_URL: at.sandboxUrl,
        PUBLIC_BASE_URL: at.gatewayUrl,
        MEDIA_DIR: at.mediaDir,
      };
    case 'inbox':
      return {
        INBOX_GRPC_ADDRESS: listen,
        OPS_PORT: opsPort,
        IDENTITY_GRPC_URL: at.identity,
        ACCOUNTS_GRPC_URL: at.accounts,
        PUBLISHING_GRPC_URL: at.publishing,
        GRAPH_API_BASE_URL: at.sandboxUrl,
      };
    case 'gateway':
      return {
        PORT: listen,
        OPS_PORT: opsPort,
        INBOX_GRPC_URL: at.inbox,
        IDENTITY_GRPC_URL: at.identity,
        ACCOUNTS_GRPC_URL: at.accounts,
        WEBHOOKS_GRPC_URL: at.webhooks,
        PUBLISHING_GRPC_URL: at.publishing,
      };
  }
}
