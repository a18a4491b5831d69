-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "accounts";

-- CreateTable
CREATE TABLE "connect_links" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "networks" TEXT[],
    "redirect_url" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connect_links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_states" (
    "id" TEXT NOT NULL,
    "link_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_states_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "page_choices" (
    "id_hash" TEXT NOT NULL,
    "link_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "user_token" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "page_choices_pkey" PRIMARY KEY ("id_hash")
);

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "platform_id" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "avatar_url" TEXT NOT NULL,
    "page_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "last_error" TEXT,
    "scopes" TEXT[],
    "token" TEXT,
    "token_expires_at" TIMESTAMPTZ(3),
    "provider_user_id" TEXT,
    "connected_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
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
CREATE UNIQUE INDEX "connect_links_token_hash_key" ON "connect_links"("token_hash");

-- CreateIndex
CREATE INDEX "connect_links_workspace_id_idx" ON "connect_links"("workspace_id");

-- CreateIndex
CREATE INDEX "oauth_states_link_id_idx" ON "oauth_states"("link_id");

-- CreateIndex
CREATE INDEX "oauth_states_expires_at_idx" ON "oauth_states"("expires_at");

-- CreateIndex
CREATE INDEX "page_choices_link_id_idx" ON "page_choices"("link_id");

-- CreateIndex
CREATE INDEX "page_choices_expires_at_idx" ON "page_choices"("expires_at");

-- CreateIndex
CREATE INDEX "accounts_partner_id_workspace_id_idx" ON "accounts"("partner_id", "workspace_id");

-- CreateIndex
CREATE INDEX "accounts_provider_user_id_idx" ON "accounts"("provider_user_id");

-- CreateIndex
CREATE INDEX "accounts_status_token_expires_at_idx" ON "accounts"("status", "token_expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "accounts_workspace_id_network_platform_id_key" ON "accounts"("workspace_id", "network", "platform_id");

-- CreateIndex
CREATE INDEX "outbox_published_at_created_at_idx" ON "outbox"("published_at", "created_at");

