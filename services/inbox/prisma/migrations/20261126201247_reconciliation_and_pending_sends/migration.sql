-- AlterTable
ALTER TABLE "account_imports" ADD COLUMN     "next_sweep_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "account_imports_next_sweep_at_idx" ON "account_imports"("next_sweep_at");

-- Written by hand. A private reply is now claimed together with its message (state `sending`),
-- which the reconciliation settles after a crash. A claim left by the code before this had no
-- such message and blocked its comment for good: it is freed (the network itself refuses a
-- second private reply to a comment that got one, and the comment then shows `not_allowed`).
UPDATE "messages" SET "private_reply_state" = NULL
WHERE "private_reply_state" = 'sending' AND "private_reply_id" IS NULL;

-- Private replies recorded before this named no sender: they name the account now, as every
-- outbound message does (its network id, taken from another outbound message of the account).
UPDATE "messages" pr SET "sender" = jsonb_build_object('id', o."sender"->>'id', 'name', NULL, 'handle', NULL)
FROM (SELECT DISTINCT ON ("account_id") "account_id", "sender" FROM "messages"
      WHERE "direction" = 'outbound' AND "kind" <> 'private_reply' AND "sender"->>'id' IS NOT NULL
      ORDER BY "account_id", "stored_at") o
WHERE pr."kind" = 'private_reply' AND pr."sender" IS NULL AND o."account_id" = pr."account_id";
