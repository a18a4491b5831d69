-- AlterTable
ALTER TABLE "connect_links" ADD COLUMN     "embed_session_id" TEXT;

-- AlterTable
ALTER TABLE "oauth_states" ADD COLUMN     "browser_hash" TEXT;

