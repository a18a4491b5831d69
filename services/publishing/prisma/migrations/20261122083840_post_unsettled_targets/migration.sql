-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "unsettled" INTEGER NOT NULL DEFAULT 0;


-- Posts publishing while this is applied count their targets still to settle.
UPDATE "posts" p SET "unsettled" = (
  SELECT count(*) FROM "post_targets" t WHERE t."post_id" = p."id" AND t."status" NOT IN ('published', 'failed')
) WHERE p."status" = 'publishing';
