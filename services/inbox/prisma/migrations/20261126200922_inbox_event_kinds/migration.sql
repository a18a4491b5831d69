-- AlterTable
ALTER TABLE "conversations" ADD COLUMN     "read_by_contact_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "edited_at" TIMESTAMPTZ(3),
ADD COLUMN     "hidden" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "reactions" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "reply_story" JSONB,
ADD COLUMN     "unsupported" BOOLEAN NOT NULL DEFAULT false;

