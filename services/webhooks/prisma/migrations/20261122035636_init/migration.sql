-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "webhooks";

-- CreateTable
CREATE TABLE "webhooks" (
    "partner_id" TEXT NOT NULL,
    "partner_slug" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret_sealed" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("partner_id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "partner_slug" TEXT NOT NULL,
    "workspace_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "body" TEXT NOT NULL,
    "stored_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deliveries" (
    "event_id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3),
    "claim_token" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("event_id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "latency_ms" INTEGER NOT NULL,
    "succeeded" BOOLEAN NOT NULL,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhooks_partner_slug_key" ON "webhooks"("partner_slug");

-- CreateIndex
CREATE INDEX "events_partner_slug_created_at_id_idx" ON "events"("partner_slug", "created_at", "id");

-- CreateIndex
CREATE INDEX "events_partner_slug_type_created_at_id_idx" ON "events"("partner_slug", "type", "created_at", "id");

-- CreateIndex
CREATE INDEX "events_partner_slug_workspace_id_created_at_id_idx" ON "events"("partner_slug", "workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "events_stored_at_idx" ON "events"("stored_at");

-- CreateIndex
CREATE INDEX "deliveries_partner_id_state_idx" ON "deliveries"("partner_id", "state");

-- CreateIndex
CREATE INDEX "delivery_attempts_event_id_attempted_at_idx" ON "delivery_attempts"("event_id", "attempted_at");

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written (Prisma's schema cannot express partial indexes): the two claim lanes of the
-- delivery worker, first attempts and retries, each ordered by due time and holding only pending rows.
CREATE INDEX "deliveries_first_attempt_due_idx" ON "deliveries"("next_attempt_at") WHERE "state" = 'pending' AND "attempt_count" = 0;

CREATE INDEX "deliveries_retry_due_idx" ON "deliveries"("next_attempt_at") WHERE "state" = 'pending' AND "attempt_count" > 0;
