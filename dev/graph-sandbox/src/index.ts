export { buildSandbox, type RunningSandbox, startSandbox, stripVersion } from './app.ts';
export { type SandboxConfig, sandboxConfig, sandboxConfigSchema } from './config.ts';
export { metaJson, signatureHeaders, signedRequest } from './webhooks.ts';
export type { World } from './world.ts';
