-- Written by hand: Prisma does not model storage parameters.
-- A target row is updated four or five times on its way (claimed, container, sent, outcome) and
-- its post once or twice. Room left on each page lets Postgres update a row in place (a HOT
-- update, with no new index entries) whenever no indexed column changes, as in most of those steps.
ALTER TABLE "post_targets" SET (fillfactor = 70);
ALTER TABLE "posts" SET (fillfactor = 80);
