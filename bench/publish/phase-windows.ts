// When each phase of bench:publish ran, on the clock V8's CPU profiles use (the monotonic clock,
// in microseconds), so a profile can be read for one phase: written beside the profiles as
// phases.json ({ "throughput": [startUs, endUs], … }).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export class PhaseWindows {
  private readonly windows: Record<string, [number, number]> = {};

  /** `profileDir` undefined: nothing is profiled, nothing is written. */
  constructor(private readonly profileDir: string | undefined) {}

  async time<T>(name: string, phase: () => Promise<T>): Promise<T> {
    const start = nowUs();
    try {
      return await phase();
    } finally {
      this.windows[name] = [start, nowUs()];
    }
  }

  async write(): Promise<void> {
    if (!this.profileDir) return;
    await writeFile(path.join(this.profileDir, 'phases.json'), `${JSON.stringify(this.windows, null, 2)}\n`);
  }
}
