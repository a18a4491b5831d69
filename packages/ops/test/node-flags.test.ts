import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceNodeFlags } from '../src/node-flags.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'svc-node-flags-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function serviceWith(manifest: object): string {
  const dir = mkdtempSync(path.join(scratch, 'service-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  return dir;
}

describe('serviceNodeFlags', () => {
  // Guarantee: a launcher gets the flags a service's package.json lists, none when it lists none,
  // and a start-up error naming the file for anything that is not a list of --flags.
  it('reads nodeFlags from the package.json', () => {
    expect(serviceNodeFlags(serviceWith({ nodeFlags: ['--max-semi-space-size=64'] }))).toEqual([
      '--max-semi-space-size=64',
    ]);
    expect(serviceNodeFlags(serviceWith({ name: 'plain' }))).toEqual([]);
    const bad = serviceWith({ nodeFlags: '--max-semi-space-size=64' });
    expect(() => serviceNodeFlags(bad)).toThrow(`${bad}/package.json: nodeFlags must be a list of --flags`);
    expect(() => serviceNodeFlags(serviceWith({ nodeFlags: ['rm -rf'] }))).toThrow(/nodeFlags/);
  });
});
