-- AlterTable
ALTER TABLE "post_targets" ADD COLUMN     "waiting_since" TIMESTAMPTZ(3),
ADD COLUMN     "waiting_until" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "post_targets_waiting_until_idx" ON "post_targets"("waiting_until");

