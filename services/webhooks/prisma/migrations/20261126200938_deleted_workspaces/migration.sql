-- CreateTable
CREATE TABLE "deleted_workspaces" (
    "workspace_id" TEXT NOT NULL,
    "partner_slug" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deleted_workspaces_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateIndex
CREATE INDEX "deleted_workspaces_deleted_at_idx" ON "deleted_workspaces"("deleted_at");

