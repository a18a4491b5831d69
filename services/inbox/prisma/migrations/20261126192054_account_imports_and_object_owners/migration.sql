-- AlterTable
-- Published objects are keyed by the account that published them too (written by hand: existing
-- rows get their account from a comment thread of the same workspace on that object). A row no
-- thread names cannot be given an account and is dropped: a later comment on that post shows
-- `post: null` rather than risking another account's post id.
ALTER TABLE "published_objects" ADD COLUMN "account_id" TEXT;

UPDATE "published_objects" po SET "account_id" = c."account_id"
FROM "conversations" c
WHERE c."kind" = 'comments' AND c."thread_key" = po."platform_id" AND c."workspace_id" = po."workspace_id";

DELETE FROM "published_objects" WHERE "account_id" IS NULL;

ALTER TABLE "published_objects" DROP CONSTRAINT "published_objects_pkey",
ALTER COLUMN "account_id" SET NOT NULL,
ADD CONSTRAINT "published_objects_pkey" PRIMARY KEY ("account_id", "platform_id");

-- CreateTable
CREATE TABLE "account_imports" (
    "account_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "history_before" TIMESTAMPTZ(3),
    "missed_since" TIMESTAMPTZ(3),

    CONSTRAINT "account_imports_pkey" PRIMARY KEY ("account_id")
);

-- CreateIndex
CREATE INDEX "account_imports_workspace_id_idx" ON "account_imports"("workspace_id");

-- Accounts served before this table existed: their first conversation dates their first import
-- (written by hand), so that an import after a gap knows what is history.
INSERT INTO "account_imports" ("account_id", "workspace_id", "history_before")
SELECT "account_id", min("workspace_id"), min("created_at") FROM "conversations" GROUP BY "account_id";
