-- AlterTable
ALTER TABLE "media" ADD COLUMN     "audio_codec" TEXT,
ADD COLUMN     "audio_sample_rate_hz" INTEGER,
ADD COLUMN     "bit_rate" INTEGER,
ADD COLUMN     "duration_ms" INTEGER,
ADD COLUMN     "frame_rate" DOUBLE PRECISION,
ADD COLUMN     "has_edit_list" BOOLEAN,
ADD COLUMN     "moov_at_front" BOOLEAN,
ADD COLUMN     "video_codec" TEXT;

-- CreateTable
CREATE TABLE "media_uploads" (
    "id" TEXT NOT NULL,
    "partner_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "length" INTEGER,
    "offset" INTEGER NOT NULL DEFAULT 0,
    "filename" TEXT NOT NULL DEFAULT '',
    "max_bytes" INTEGER NOT NULL,
    "media_id" TEXT NOT NULL,
    "writing_until" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "media_uploads_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "media_uploads_partner_id_expires_at_idx" ON "media_uploads"("partner_id", "expires_at");

-- CreateIndex
CREATE INDEX "media_uploads_workspace_id_idx" ON "media_uploads"("workspace_id");

-- CreateIndex
CREATE INDEX "media_uploads_expires_at_idx" ON "media_uploads"("expires_at");

