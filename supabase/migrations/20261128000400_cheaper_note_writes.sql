-- Writes that cost what they must. An insert into public.notes used to run four trigger functions and five
-- statements besides its own: create the owner's counter if missing, number the change (a second version of the
-- counter row) and send its notice, count the note (a third version), and index its words. Now:
--
-- - one update of the owner's counter row per note both counts it and numbers its change (a single new version of
--   the row, HOT as no index covers the columns it changes), the first note creating the row;
-- - one statement-level trigger per statement indexes the words of every note inserted and sends the notices.
--
-- A transaction sends one notice per owner whose notes it changed, however many notes and statements, instead of
-- one per note: "<owner> <number>", the latest number of the transaction's first statement that changed the owner's
-- notes. A notice only wakes a stream, which then reads every change after its position, all of the transaction's.
-- The owners announced so far are kept in the transaction-local setting app.announced_note_owners, which a savepoint
-- rolled back takes back together with the notices it sent.
--
-- What stays as it was: the totals per status are exact in the writing transaction, the change numbers are gapless
-- per owner and taken under the owner's counter row lock until commit (so one owner's notices arrive in the order
-- of their numbers), every insert, update and deletion is announced on channel note_changes when it commits, and
-- the payload carries only the owner's id and a number.

-- Numbering only: updates and tombstones take their numbers here; the statement triggers send the notices.
create or replace function app.next_note_change(owner uuid) returns bigint
language sql volatile
security definer
set search_path = ''
as $$
  update app.note_counts set last_change = last_change + 1 where user_id = next_note_change.owner
  returning last_change
$$;
comment on function app.next_note_change(uuid) is
  'Takes the next number of the owner''s change sequence, locking their counter row until the transaction ends; null when the owner has no counter (an owner being deleted). The statement triggers of public.notes send the notices.';

create or replace function app.number_note_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    -- Counting the note in the update that numbers it: one version of the counter row per note, not three.
    update app.note_counts as c
    set last_change = c.last_change + 1,
        notes = c.notes + 1,
        published = c.published + (new.status = 'PUBLISHED')::integer
    where c.user_id = new.created_by
    returning c.last_change into new.change_seq;
    if not found then
      -- A user's first note creates their counter; a concurrent first note waits for this one and counts on it.
      insert into app.note_counts as c (user_id, notes, published, last_change)
      values (new.created_by, 1, (new.status = 'PUBLISHED')::integer, 1)
      on conflict (user_id) do update
        set last_change = c.last_change + 1, notes = c.notes + 1, published = c.published + excluded.published
      returning c.last_change into new.change_seq;
    end if;
  else
    new.change_seq := app.next_note_change(new.created_by);
  end if;
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  return new;
end;
$$;

-- The row trigger above counts inserted notes now.
drop trigger notes_count_inserted on public.notes;
drop function app.count_inserted_notes();

create function app.index_and_announce_inserted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The owners this transaction has announced already (see the top of this file), kept local to it.
  announced text := coalesce(current_setting('app.announced_note_owners', true), '');
  sent bigint;
begin
  -- New notes have new ids, so their words cannot be there yet.
  insert into app.note_words (note_id, created_by, words)
  select id, created_by, app.note_search_vector(title, content) from inserted_notes;
  select count(pg_notify('note_changes', owner::text || ' ' || last_change::text)),
         set_config('app.announced_note_owners', announced || coalesce(string_agg(owner::text || ' ', ''), ''), true)
  into sent, announced
  from (select created_by as owner, max(change_seq) as last_change from inserted_notes group by created_by) as changed
  where strpos(announced, owner::text) = 0;
  return null;
end;
$$;
revoke all on function app.index_and_announce_inserted_notes() from public, anon, authenticated;

drop trigger notes_index_words_inserted on public.notes;
create trigger notes_index_and_announce_inserted
after insert on public.notes
referencing new table as inserted_notes
for each statement execute function app.index_and_announce_inserted_notes();

-- Updates: the counts as before, and the notice of each owner of the notes after the update.
create or replace function app.count_reassigned_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  announced text := coalesce(current_setting('app.announced_note_owners', true), '');
  sent bigint;
begin
  insert into app.note_counts (user_id)
  select distinct after.created_by
  from old_notes as before join new_notes as after using (id)
  where before.created_by is distinct from after.created_by
  on conflict (user_id) do nothing;

  with moved as (
    select before.created_by as from_owner, before.status as from_status,
           after.created_by as to_owner, after.status as to_status
    from old_notes as before join new_notes as after using (id)
    where before.created_by is distinct from after.created_by or before.status is distinct from after.status
  ), deltas as (
    select owner, sum(notes) as notes, sum(published) as published from (
      select to_owner as owner, 1 as notes, (to_status = 'PUBLISHED')::int as published from moved
      union all
      select from_owner, -1, -(from_status = 'PUBLISHED')::int from moved
    ) as changes
    group by owner
  )
  update app.note_counts as c
  set notes = c.notes + d.notes, published = c.published + d.published
  from deltas as d
  where c.user_id = d.owner and (d.notes <> 0 or d.published <> 0);

  select count(pg_notify('note_changes', owner::text || ' ' || last_change::text)),
         set_config('app.announced_note_owners', announced || coalesce(string_agg(owner::text || ' ', ''), ''), true)
  into sent, announced
  from (select created_by as owner, max(change_seq) as last_change from new_notes group by created_by) as changed
  where strpos(announced, owner::text) = 0;
  return null;
end;
$$;

-- Deletions: the counts as before, and the notice of each owner whose deletions left tombstones (the number is the
-- counter's latest, as the tombstone row triggers have run by now). An owner deleted with their notes has no
-- counter left and no tombstones: no notice.
create or replace function app.count_deleted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  announced text := coalesce(current_setting('app.announced_note_owners', true), '');
  sent bigint;
begin
  with counted as (
    update app.note_counts as c
    set notes = c.notes - gone.notes, published = c.published - gone.published
    from (
      select created_by, count(*) as notes, count(*) filter (where status = 'PUBLISHED') as published
      from deleted_notes group by created_by
    ) as gone
    where c.user_id = gone.created_by
    returning c.user_id, c.last_change
  )
  select count(pg_notify('note_changes', user_id::text || ' ' || last_change::text)),
         set_config('app.announced_note_owners', announced || coalesce(string_agg(user_id::text || ' ', ''), ''), true)
  into sent, announced
  from counted
  where strpos(announced, user_id::text) = 0;
  return null;
end;
$$;
