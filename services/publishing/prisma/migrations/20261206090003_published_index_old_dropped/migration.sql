-- The index of every row's (account_id, published_at), replaced by post_targets_published_idx.
DROP INDEX CONCURRENTLY "post_targets_account_id_published_at_idx";
