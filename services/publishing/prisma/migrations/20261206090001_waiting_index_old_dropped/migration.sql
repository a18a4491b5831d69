-- The index of every row's waiting_until, replaced by post_targets_waiting_idx (the migration before).
DROP INDEX CONCURRENTLY "post_targets_waiting_until_idx";
