-- CreateIndex
CREATE INDEX "accounts_platform_id_idx" ON "accounts"("platform_id");

