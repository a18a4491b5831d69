export { AccountsDirectory, type AccountToken, accountGone } from './accounts-directory.ts';
export type { KnownAccount } from './known-account.ts';
export { WorkspaceDirectory } from './workspace-directory.ts';
