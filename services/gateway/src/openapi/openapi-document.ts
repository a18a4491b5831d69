import type { ServiceClients } from '../clients.ts';
import { httpRoutes, operationTable } from '../operations/table.ts';
import { API_VERSION, buildOpenApi } from './openapi.ts';

/**
 * The document `/v1/openapi.json` serves, from the route table alone: no service is called or
 * started (the clients are never used to describe a route). The SDK generates its types from it.
 */
export function openApiDocument(): Record<string, unknown> {
  return buildOpenApi(httpRoutes(operationTable({} as ServiceClients)), API_VERSION);
}
