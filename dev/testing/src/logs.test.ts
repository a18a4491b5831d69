import { describe, expect, it } from 'vitest';
import { type LogLine, linesSince, markLogs, unwatchLogs, watchLogs } from './logs.ts';

describe("a failed test's service logs", () => {
  // Guarantee: what a failed test prints is what its systems logged during it: not the lines of
  // the tests before it, and also those of a system it started and stopped itself.
  it('are the lines logged since the mark, by systems running then or started since', () => {
    const before: LogLine[] = [{ msg: 'earlier test' }];
    watchLogs(before);
    const marks = markLogs();
    before.push({ msg: 'during' });
    const own: LogLine[] = [];
    watchLogs(own);
    own.push({ msg: 'own system' });
    unwatchLogs(own);
    unwatchLogs(before);
    expect(linesSince(marks).map((line) => line.msg)).toEqual(['during', 'own system']);
    expect(linesSince(markLogs())).toEqual([]);
  });
});
