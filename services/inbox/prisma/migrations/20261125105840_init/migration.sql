-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "inbox";

-- CreateTable
CREATE TABLE "conversations" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "thread_key" TEXT NOT NULL,
    "contact" JSONB,
    "object" JSONB,
    "last_message_at" TIMESTAMPTZ(3),
    "last_inbound_at" TIMESTAMPTZ(3),
    "unread_count" INTEGER NOT NULL DEFAULT 0,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" TEXT NOT NULL,
    "conversation_id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "platform_message_id" TEXT,
    "sender" JSONB,
    "text" TEXT,
    "attachments" JSONB NOT NULL DEFAULT '[]',
    "parent_platform_id" TEXT,
    "source" TEXT,
    "state" TEXT NOT NULL DEFAULT 'sent',
    "private_reply_state" TEXT,
    "private_reply_id" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "stored_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "published_objects" (
    "platform_id" TEXT NOT NULL,
    "post_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,

    CONSTRAINT "published_objects_pkey" PRIMARY KEY ("platform_id")
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
CREATE INDEX "conversations_workspace_id_last_message_at_idx" ON "conversations"("workspace_id", "last_message_at");

-- CreateIndex
CREATE INDEX "conversations_partner_id_last_message_at_idx" ON "conversations"("partner_id", "last_message_at");

-- CreateIndex
CREATE UNIQUE INDEX "conversations_account_id_kind_thread_key_key" ON "conversations"("account_id", "kind", "thread_key");

-- CreateIndex
CREATE INDEX "messages_conversation_id_created_at_idx" ON "messages"("conversation_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "messages_account_id_platform_message_id_key" ON "messages"("account_id", "platform_message_id");

-- CreateIndex
-- Partial (written by hand): only sends carry a key, and inbound messages are most rows.
CREATE UNIQUE INDEX "messages_partner_id_idempotency_key_key" ON "messages"("partner_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;

-- CreateIndex
CREATE INDEX "published_objects_workspace_id_idx" ON "published_objects"("workspace_id");

-- CreateIndex
CREATE INDEX "outbox_published_at_created_at_idx" ON "outbox"("published_at", "created_at");

