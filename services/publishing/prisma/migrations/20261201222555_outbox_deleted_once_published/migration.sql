-- The relay deletes a row once it is out (nothing reads a published row again): the rows it
-- marked published before go now, and the outbox is indexed for its claim, oldest first.
DELETE FROM "outbox" WHERE "published_at" IS NOT NULL;

-- DropIndex
DROP INDEX "outbox_published_at_created_at_idx";

-- AlterTable
ALTER TABLE "outbox" DROP COLUMN "published_at";

-- CreateIndex
CREATE INDEX "outbox_created_at_id_idx" ON "outbox"("created_at", "id");

