// `pnpm dead-letters list [--consumer <durable>]`: the messages a consumer gave up on after its
// last delivery (DEAD_LETTERS stream), with the consumer, the original subject, the deliveries,
// when, and why. `pnpm dead-letters replay <id>` puts one back on its subject for that consumer
// only; `replay --consumer <durable>` replays all of that consumer's. Replay once the cause is
// fixed (a replayed message that fails again comes back here after its retries). Uses NATS_URL
// and NATS_PREFIX as the services do.
import { connectBus, type DeadLetter, listDeadLetters, replayDeadLetter } from '@svc/bus';
import { createLogger } from '@svc/logging';

const USAGE =
  'usage: pnpm dead-letters list [--consumer <durable>] | replay <id> | replay --consumer <durable>';

const [command, ...rest] = process.argv.slice(2);
const consumer = rest[0] === '--consumer' ? rest[1] : undefined;
const id = rest[0] !== '--consumer' && rest[0] ? Number(rest[0]) : undefined;
if (
  (command !== 'list' && command !== 'replay') ||
  (rest[0] === '--consumer' && !consumer) ||
  (command === 'replay' && !consumer && !Number.isInteger(id))
) {
  console.error(USAGE);
  process.exit(2);
}

const bus = await connectBus({
  url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  prefix: process.env.NATS_PREFIX ?? '',
  name: 'dead-letters',
  logger: createLogger('dead-letters', { level: 'warn' }),
});
const line = (l: DeadLetter) =>
  `${l.id}\t${l.at}\t${l.consumer}\t${l.subject}\t${l.deliveries} deliveries\t${l.reason}`;
try {
  if (command === 'list') {
    const letters = await listDeadLetters(bus, consumer);
    for (const letter of letters) console.log(line(letter));
    console.log(`${letters.length} dead letter(s)`);
  } else {
    const ids = id !== undefined ? [id] : (await listDeadLetters(bus, consumer)).map((l) => l.id);
    for (const each of ids) console.log(`replayed ${line(await replayDeadLetter(bus, each))}`);
    console.log(`${ids.length} replayed`);
  }
} catch (error) {
  console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await bus.close();
}
