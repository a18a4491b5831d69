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

/** The log lines of every system running in this test process (see System.start and stop). */
const running = new Set<LogLine[]>();
/** Those of the systems started since the last mark, stopped or not (a test may start and stop one). */
let startedSinceMark: LogLine[][] = [];

export function watchLogs(lines: LogLine[]): void {
  running.add(lines);
  startedSinceMark.push(lines);
}

export function unwatchLogs(lines: LogLine[]): void {
  running.delete(lines);
}

/** Where each running system's log stands now. */
export function markLogs(): Map<LogLine[], number> {
  startedSinceMark = [];
  return new Map([...running].map((lines) => [lines, lines.length]));
}

/** The lines logged since `marks` by the systems running then and those started since. */
export function linesSince(marks: Map<LogLine[], number>): LogLine[] {
  const logs = new Set([...marks.keys(), ...startedSinceMark]);
  return [...logs].flatMap((lines) => lines.slice(marks.get(lines) ?? 0));
}
