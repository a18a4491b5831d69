import type { ApiKeyView, CreatedApiKeyView } from '@svc/contracts/public';
import type { ApiKey } from './generated/prisma/client.ts';

/** The key as partners see it (`ApiKeyView`): the only place a key row becomes it. */
export function viewOfApiKey(row: ApiKey): ApiKeyView {
  return {
    id: row.id,
    prefix: row.prefix,
    label: row.label,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    created: row.createdAt.toISOString(),
  };
}

/** The answer to minting a key, with its plain key (only ever here: the row keeps its hash). */
export function viewOfCreatedApiKey(row: ApiKey, plainKey: string): CreatedApiKeyView {
  const { id, prefix, label, created } = viewOfApiKey(row);
  return { id, key: plainKey, prefix, label, created };
}
