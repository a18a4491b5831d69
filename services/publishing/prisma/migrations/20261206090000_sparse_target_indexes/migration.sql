-- Written by hand: Prisma does not model partial indexes.
-- Most targets never wait and a target has no published_at until it is published, so an index of
-- every row held a NULL entry for each, written when the target is created and again whenever its
-- row moves (its outcome). Every reader asks for set values only (`waiting_until <= $1`,
-- `published_at > $2`), which these partial indexes answer.
DROP INDEX "post_targets_waiting_until_idx";
CREATE INDEX "post_targets_waiting_until_idx" ON "post_targets"("waiting_until") WHERE "waiting_until" IS NOT NULL;
DROP INDEX "post_targets_account_id_published_at_idx";
CREATE INDEX "post_targets_account_id_published_at_idx" ON "post_targets"("account_id", "published_at") WHERE "published_at" IS NOT NULL;
