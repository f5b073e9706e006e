-- Versions of notes. A note's updated_at, as the API writes it (ISO 8601 to the
-- millisecond), is the version a client names in expectedUpdatedAt to save or
-- delete only what it has seen. A version must never repeat, so every update
-- moves updated_at to now() or, when that is not later, to one millisecond past
-- the previous version: two saves in one millisecond, or in one transaction
-- (one now()), still get distinct versions. Concurrent updates of one row are
-- serialised by its row lock, and the trigger reads the row as the previous
-- update left it, so the order holds under concurrency too.

create function app.advance_note_version() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := greatest(now(), date_trunc('milliseconds', old.updated_at) + interval '1 millisecond');
  return new;
end;
$$;
comment on function app.advance_note_version() is
  'Sets updated_at to now() or, if that is not later, to 1 ms past the previous updated_at (truncated to ms), so versions strictly increase at the API''s precision.';
revoke all on function app.advance_note_version() from public;

drop trigger notes_touch_updated_at on public.notes;
create trigger notes_advance_version
before update on public.notes
for each row execute function app.advance_note_version();

comment on column public.notes.updated_at is
  'The note''s version: strictly increasing at millisecond precision on every update (app.advance_note_version).';
