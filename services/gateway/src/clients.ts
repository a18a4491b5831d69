import { AccountsService, createClient, IdentityService, type ServiceClient } from '@svc/contracts';

export type IdentityClient = ServiceClient<typeof IdentityService>;
export type AccountsClient = ServiceClient<typeof AccountsService>;

/** The gateway's gRPC clients, one per service it calls. */
export interface ServiceClients {
  identity: IdentityClient;
  accounts: AccountsClient;
}

export interface ServiceAddresses {
  identity: string;
  accounts: string;
}

export function connectClients(addresses: ServiceAddresses): ServiceClients & { close(): void } {
  const clients: ServiceClients = {
    identity: createClient(IdentityService, addresses.identity),
    accounts: createClient(AccountsService, addresses.accounts),
  };
  return {
    ...clients,
    close: () => {
      for (const client of Object.values(clients)) client.close();
    },
  };
}
