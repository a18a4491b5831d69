-- AlterTable
ALTER TABLE "partners" ADD COLUMN     "embed_rate_limit_per_minute" INTEGER NOT NULL DEFAULT 120;

-- CreateTable
CREATE TABLE "embed_sessions" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "surfaces" TEXT[],
    "allowed_origins" TEXT[],
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "embed_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "embed_sessions_hash_key" ON "embed_sessions"("hash");

-- CreateIndex
CREATE INDEX "embed_sessions_workspace_id_id_idx" ON "embed_sessions"("workspace_id", "id");

-- CreateIndex
CREATE INDEX "embed_sessions_partner_id_id_idx" ON "embed_sessions"("partner_id", "id");

-- CreateIndex
CREATE INDEX "embed_sessions_expires_at_idx" ON "embed_sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "embed_sessions" ADD CONSTRAINT "embed_sessions_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "embed_sessions" ADD CONSTRAINT "embed_sessions_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

