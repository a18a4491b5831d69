import {
  AccountsService,
  createClient,
  IdentityService,
  InboxService,
  PublishingService,
  type ServiceClient,
  WebhooksService,
} from '@svc/contracts';

export type IdentityClient = ServiceClient<typeof IdentityService>;
export type AccountsClient = ServiceClient<typeof AccountsService>;
export type WebhooksClient = ServiceClient<typeof WebhooksService>;
export type PublishingClient = ServiceClient<typeof PublishingService>;
export type InboxClient = ServiceClient<typeof InboxService>;

/** Media files travel through gRPC (uploads, signed-URL reads). */
const MEDIA_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * HTTP/2's flow-control window of the calls to publishing: how much of a file may be on its way
 * before the gateway acknowledges it. A 1 MB photo needed 16 acknowledgements at the default
 * 64 KiB and 2 at this size, and its first fetch cost half the CPU (bench:publish, gateway and
 * publishing together).
 */
const MEDIA_FILE_WINDOW_BYTES = 512 * 1024;

/** The gateway's gRPC clients, one per service it calls. */
export interface ServiceClients {
  identity: IdentityClient;
  accounts: AccountsClient;
  webhooks: WebhooksClient;
  publishing: PublishingClient;
  inbox: InboxClient;
}

export interface ServiceAddresses {
  identity: string;
  accounts: string;
  webhooks: string;
  publishing: string;
  inbox: string;
}

export function connectClients(addresses: ServiceAddresses): ServiceClients & { close(): void } {
  const clients: ServiceClients = {
    identity: createClient(IdentityService, addresses.identity),
    accounts: createClient(AccountsService, addresses.accounts),
    webhooks: createClient(WebhooksService, addresses.webhooks),
    publishing: createClient(PublishingService, addresses.publishing, {
      maxMessageBytes: MEDIA_MESSAGE_BYTES,
      windowBytes: MEDIA_FILE_WINDOW_BYTES,
    }),
    inbox: createClient(InboxService, addresses.inbox),
  };
  return {
    ...clients,
    close: () => {
      for (const client of Object.values(clients)) client.close();
    },
  };
}
