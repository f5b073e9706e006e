-- Each user's note count, kept exact as notes are inserted, deleted or change
-- owner, so a listing's total costs one primary-key read at any size instead
-- of a scan of the owner's index entries.

create table app.note_counts (
  user_id uuid primary key references app.users (id) on delete cascade,
  notes integer not null default 0 check (notes >= 0)
);
comment on table app.note_counts is
  'How many notes each user owns, maintained by statement triggers on public.notes in the same transaction as the change.';
revoke all on table app.note_counts from public, anon, authenticated;

insert into app.note_counts (user_id, notes)
select created_by, count(*) from public.notes group by created_by;

-- Statement-level triggers over transition tables: one upsert per statement and owner, so a bulk
-- insert of a million notes costs one grouped update, not a million. Security definer because
-- the caller (`authenticated`) may not write app.note_counts; search_path is empty so nothing
-- can be shadowed. Concurrent changes for one owner queue on that owner's counter row.
create function app.count_inserted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.note_counts as c (user_id, notes)
  select created_by, count(*) from inserted_notes group by created_by
  on conflict (user_id) do update set notes = c.notes + excluded.notes;
  return null;
end;
$$;

create function app.count_deleted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- An owner deleted together with their notes has no counter left to update, which is fine.
  update app.note_counts as c set notes = c.notes - gone.notes
  from (select created_by, count(*) as notes from deleted_notes group by created_by) as gone
  where c.user_id = gone.created_by;
  return null;
end;
$$;

create function app.count_reassigned_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  with moved as (
    select before.created_by as from_owner, after.created_by as to_owner
    from old_notes as before join new_notes as after using (id)
    where before.created_by is distinct from after.created_by
  ), deltas as (
    select to_owner as owner, count(*) as change from moved group by to_owner
    union all
    select from_owner, -count(*) from moved group by from_owner
  )
  insert into app.note_counts as c (user_id, notes)
  select owner, sum(change) from deltas group by owner
  on conflict (user_id) do update set notes = c.notes + excluded.notes;
  return null;
end;
$$;
revoke all on function app.count_inserted_notes() from public, anon, authenticated;
revoke all on function app.count_deleted_notes() from public, anon, authenticated;
revoke all on function app.count_reassigned_notes() from public, anon, authenticated;

create trigger notes_count_inserted
after insert on public.notes
referencing new table as inserted_notes
for each statement execute function app.count_inserted_notes();

create trigger notes_count_deleted
after delete on public.notes
referencing old table as deleted_notes
for each statement execute function app.count_deleted_notes();

create trigger notes_count_reassigned
after update on public.notes
referencing old table as old_notes new table as new_notes
for each statement execute function app.count_reassigned_notes();

-- The caller's own count, for the listing that runs as `authenticated` under row-level security.
create function app.caller_note_count() returns integer
language sql stable
security definer
set search_path = ''
as $$
  select coalesce((select notes from app.note_counts where user_id = (select auth.uid())), 0)
$$;
comment on function app.caller_note_count() is
  'How many notes the JWT caller owns (request.jwt.claims), from app.note_counts.';
revoke all on function app.caller_note_count() from public, anon;
grant execute on function app.caller_note_count() to authenticated;
