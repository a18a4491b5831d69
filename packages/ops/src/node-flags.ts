import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The Node flags a service asks for in its package.json (`nodeFlags`), which every launcher
 * passes: `pnpm start`, the test and bench harness, and the Docker image (which compose and
 * Kubernetes run), so a service runs the same way everywhere. The gateway's is a larger young
 * generation: an MCP call leaves much short-lived garbage (the SDK's per-request server and web
 * objects), and a larger young generation is scavenged less often.
 */
export function serviceNodeFlags(serviceDir: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(serviceDir, 'package.json'), 'utf8')) as {
    nodeFlags?: unknown;
  };
  const flags = manifest.nodeFlags ?? [];
  if (!Array.isArray(flags) || !flags.every((flag) => typeof flag === 'string' && flag.startsWith('--')))
    throw new Error(`${serviceDir}/package.json: nodeFlags must be a list of --flags`);
  return flags;
}
