import { GroupCommit } from '@svc/db';

/** The most webhook bodies recorded in one transaction. */
const MAX_BODIES = 64;

/** One body's part of a batch, and what became of it when the batch could not be written whole. */
interface Body<P> {
  plans: P[];
  error?: unknown;
}

/**
 * Records the new messages of many webhook bodies in one transaction (group commit): while one
 * batch is being written, the bodies that arrive meanwhile gather and go in the next. At a low
 * rate a body is written alone at once; under load one commit (and one statement of each kind)
 * carries many, which is what lets the intake keep up with single-message bodies (Meta sends one
 * message per body at ordinary load) instead of queueing one transaction chain per body. Each
 * body's `record` resolves only after its own commit, so its JetStream message is acked only then.
 *
 * Exactly-once does not depend on the grouping: a message is stored once per (account, network
 * id) whichever body or batch brings it, and its event is written in the transaction that stored
 * it. A batch that fails (a deadlock, one body's bad data) is written again one body at a time,
 * so each body gets its own outcome and one body's failure is not the others'.
 */
export class IntakeBatches<P> {
  private readonly commit: GroupCommit<Body<P>>;

  constructor(private readonly write: (plans: P[]) => Promise<void>) {
    this.commit = new GroupCommit((bodies) => this.writeBodies(bodies), { maxBatch: MAX_BODIES });
  }

  /** Records one body's plans with those of the bodies gathered beside it; throws its own failure. */
  async record(plans: P[]): Promise<void> {
    const body: Body<P> = { plans };
    await this.commit.add(body);
    if ('error' in body) throw body.error;
  }

  private async writeBodies(bodies: Body<P>[]): Promise<void> {
    try {
      await this.write(bodies.flatMap((b) => b.plans));
      return;
    } catch (error) {
      if (bodies.length === 1) {
        (bodies[0] as Body<P>).error = error;
        return;
      }
    }
    for (const body of bodies)
      await this.write(body.plans).catch((error: unknown) => {
        body.error = error;
      });
  }
}
