-- AlterTable
ALTER TABLE "workspaces" ALTER COLUMN "name" DROP NOT NULL,
ALTER COLUMN "timezone" DROP NOT NULL,
ALTER COLUMN "settings" DROP NOT NULL;

-- Workspaces deleted before this migration keep nothing personal either.
UPDATE "workspaces"
   SET "name" = NULL, "timezone" = NULL, "settings" = NULL, "external_id" = NULL
 WHERE "deleted_at" IS NOT NULL;
UPDATE "api_keys" SET "label" = ''
 WHERE "workspace_id" IN (SELECT "id" FROM "workspaces" WHERE "deleted_at" IS NOT NULL);

-- Hand-written (Prisma does not model CHECK constraints): a live workspace has its fields, a
-- tombstone has none, so no code path can leave one half cleared.
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_tombstone_check" CHECK (
  ("deleted_at" IS NULL AND "name" IS NOT NULL AND "timezone" IS NOT NULL AND "settings" IS NOT NULL)
  OR ("deleted_at" IS NOT NULL AND "name" IS NULL AND "timezone" IS NULL AND "settings" IS NULL
      AND "external_id" IS NULL)
);
