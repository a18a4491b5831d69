import { Writable } from 'node:stream';

/** One structured log line as a service wrote it (pino's JSON). */
export type LogLine = Record<string, unknown>;

/**
 * Keeps every JSON log line written to it, so tests can assert on what a service logged. Lines
 * that are not JSON (a stack trace printed by Node, say) go on to stderr instead of being lost.
 */
export function logSink(lines: LogLine[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) keepLine(lines, line);
      done();
    },
  });
}

export function keepLine(lines: LogLine[], line: string): void {
  try {
    lines.push(JSON.parse(line) as LogLine);
  } catch {
    process.stderr.write(`${line}\n`);
  }
}
