-- Written by hand: Prisma does not model partial indexes.
-- The scheduler is the only reader of posts by status, and it asks for scheduled posts only.
-- An index of every status let the planner answer the settlements (posts WHERE id = ... AND
-- status = 'publishing') by walking every publishing post when its statistics said there were few.
DROP INDEX "posts_status_schedule_at_idx";
CREATE INDEX "posts_scheduled_idx" ON "posts"("schedule_at") WHERE "status" = 'scheduled';
