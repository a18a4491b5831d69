import { beforeEach } from 'vitest';
import { type LogLine, linesSince, markLogs } from './logs.ts';

/** pino's level of `warn`: what a failure is most often explained by. */
const WARN = 40;
const MAX_LINES = 60;
const MAX_LINE_CHARS = 600;

/**
 * When a test fails, the warnings and errors the services of its system logged during it are
 * printed beside the failure. The services' logs are captured (System.logs), so a CI run would
 * otherwise keep nothing of them, and a failure under load (a call that timed out, a retry that
 * never came) is left to guess.
 */
beforeEach((context) => {
  const marks = markLogs();
  context.onTestFailed(() => {
    const problems = linesSince(marks).filter((line) => Number(line.level) >= WARN);
    if (problems.length === 0) return;
    const shown = problems.slice(-MAX_LINES);
    const heading = `warnings and errors the services logged during "${context.task.name}" (the last ${shown.length} of ${problems.length})`;
    process.stderr.write(`\n── ${heading}\n${shown.map(oneLine).join('\n')}\n`);
  });
});

function oneLine(line: LogLine): string {
  const text = JSON.stringify(line);
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text;
}
