-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "reel" JSONB,
ADD COLUMN     "title" TEXT;

-- AlterTable
ALTER TABLE "post_targets" ADD COLUMN     "format" TEXT NOT NULL DEFAULT 'feed';

