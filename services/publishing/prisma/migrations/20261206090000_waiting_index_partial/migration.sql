-- Written by hand: Prisma does not model partial indexes. One statement a file: CONCURRENTLY keeps
-- publishing's writes going while the index is built, and it cannot run in a transaction block.
-- Most targets never wait, yet an index of every row held a NULL entry for each, written when the
-- target is created and again at its outcome (which moves the row). The one reader asks for set
-- values (`waiting_until <= $1`), which this partial index answers.
CREATE INDEX CONCURRENTLY "post_targets_waiting_idx" ON "post_targets"("waiting_until") WHERE "waiting_until" IS NOT NULL;
