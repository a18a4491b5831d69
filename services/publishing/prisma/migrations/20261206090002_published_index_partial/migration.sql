-- Written by hand: Prisma does not model partial indexes. One statement a file, as for the
-- waiting index. A target has no published_at until it is published, yet an index of every row
-- held a NULL entry from its create. Its readers (the daily limit of an account) ask for
-- `published_at > $2`, which this partial index answers.
CREATE INDEX CONCURRENTLY "post_targets_published_idx" ON "post_targets"("account_id", "published_at") WHERE "published_at" IS NOT NULL;
