-- What the API role may write when it inserts a note: its id, owner (row-level security holds it to the caller),
-- title, content and status. The rest is the triggers': found in review, a Data API insert could set
-- public.notes.attachments (the count the attachment triggers keep) to any value, and the next completed upload then
-- overflowed it. The same holds for created_at, updated_at and change_seq. Updates were narrowed the same way in
-- 20261129000100_attachments.sql.
revoke insert on table public.notes from authenticated;
grant insert (id, created_by, title, content, status) on table public.notes to authenticated;
