// Helpers every test may use, light to import (the system starter is `@svc/testing/system`).
export {
  connectThroughLink,
  consent,
  createUser,
  newLink,
  open,
  recordEvents,
  type SandboxUser,
  seen,
  start,
  trackedApi,
  workspaceWithAccounts,
} from './connect.ts';
export { CookieJar } from './cookie-jar.ts';
export { adminQuery, tablesReadWhole, testDatabaseUrl } from './database.ts';
export { api, counterSum, freePort, uploadFile } from './http.ts';
export { removePrefixedState } from './prefixed-state.ts';
export { PrivatePostgres } from './private-postgres.ts';
export { PrivateNats } from './private-servers.ts';
export { type Behaviour, type ReceivedRequest, Receiver } from './receiver.ts';
export { createTestDatabase } from './test-database.ts';
export { eventually, uniquePrefix } from './unique.ts';
export { type VideoFixture, videoFixture } from './video-fixtures.ts';
