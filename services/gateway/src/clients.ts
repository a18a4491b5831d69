import { createClient, IdentityService, type ServiceClient } from '@svc/contracts';

export type IdentityClient = ServiceClient<typeof IdentityService>;

export interface ServiceClients {
  identity: IdentityClient;
}

export function connectClients(addresses: { identity: string }): ServiceClients & { close(): void } {
  const identity = createClient(IdentityService, addresses.identity);
  return { identity, close: () => identity.close() };
}
