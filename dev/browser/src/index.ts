import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompress } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';

/** The machine's own Chromium (Debian's `chromium` package), preferred when it is there. */
const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium for the browser tests, found without a manual step: the machine's own when it
 * has one, otherwise the one shipped inside the `@sparticuz/chromium` npm package (a Linux x64
 * build; pinned to 147.0.0, the last release that still runs on Node 20). No browser download
 * happens at run time: the registry is the only network these machines reach. Without either
 * the suite fails, saying why, rather than skipping.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = existsSync(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : await packagedChromium();
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The packaged binary is Brotli-compressed; it is unpacked once per version under the temporary
 * folder. Test files run in parallel processes, so each writes its own file and renames it into
 * place: another process never starts a half-written binary.
 */
async function packagedChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('@sparticuz/chromium');
  } catch {
    throw new Error(
      `Chromium not found: no ${SYSTEM_CHROMIUM} and no @sparticuz/chromium package (run "pnpm install", or "apt-get install -y chromium")`,
    );
  }
  const packageDir = path.resolve(path.dirname(entry), '../..');
  const { version } = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8'));
  const target = path.join(tmpdir(), `svc-chromium-${version}`, 'chromium');
  if (existsSync(target)) return target;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `Chromium not found at ${SYSTEM_CHROMIUM}, and the packaged one is for Linux x64 only: install a Chromium ("apt-get install -y chromium")`,
    );
  await mkdir(path.dirname(target), { recursive: true });
  const binary = await promisify(brotliDecompress)(await readFile(path.join(packageDir, 'bin/chromium.br')));
  const partial = `${target}.${process.pid}`;
  await writeFile(partial, binary, { mode: 0o755 });
  await rename(partial, target);
  return target;
}
