-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "publishing";

-- CreateTable
CREATE TABLE "media" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "mime" TEXT NOT NULL,
    "width" INTEGER NOT NULL,
    "height" INTEGER NOT NULL,
    "size" INTEGER NOT NULL,
    "storage_key" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "media_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "posts" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "external_ref" TEXT,
    "caption" TEXT NOT NULL,
    "media_ids" TEXT[],
    "media" JSONB NOT NULL DEFAULT '[]',
    "schedule_at" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL,
    "published_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "created_by" TEXT NOT NULL,
    "options" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "posts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "post_targets" (
    "post_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "container_id" TEXT,
    "publish_sent_at" TIMESTAMPTZ(3),
    "platform_post_id" TEXT,
    "permalink" TEXT,
    "error" TEXT,
    "published_at" TIMESTAMPTZ(3),
    "first_comment_id" TEXT,
    "first_comment_error" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "post_targets_pkey" PRIMARY KEY ("post_id","account_id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "partner_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "response" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("partner_id","key")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "media_workspace_id_id_idx" ON "media"("workspace_id", "id");

-- CreateIndex
CREATE INDEX "posts_workspace_id_created_at_idx" ON "posts"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "posts_partner_id_external_ref_idx" ON "posts"("partner_id", "external_ref");

-- CreateIndex
CREATE INDEX "posts_status_schedule_at_idx" ON "posts"("status", "schedule_at");

-- CreateIndex
CREATE INDEX "post_targets_account_id_published_at_idx" ON "post_targets"("account_id", "published_at");

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- CreateIndex
CREATE INDEX "outbox_published_at_created_at_idx" ON "outbox"("published_at", "created_at");

-- AddForeignKey
ALTER TABLE "post_targets" ADD CONSTRAINT "post_targets_post_id_fkey" FOREIGN KEY ("post_id") REFERENCES "posts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

