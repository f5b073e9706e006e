-- The changes feed (issue 26, GET /notes-changes): every insert, update and
-- delete of a user's note takes the next number of that user's change sequence,
-- in the writing transaction. A note keeps the number of its latest change; a
-- deleted note leaves a tombstone with the number of its deletion.
--
-- Why no change is ever skipped: the number is taken by updating the owner's
-- counter row, whose lock is held until the transaction ends. A second writer
-- of the same user waits for the first to commit (or roll back) before it takes
-- the next number, so a user's numbers become visible in the order they were
-- taken: a reader that sees change n sees every change before it. A client that
-- asks for what follows the last number it read therefore misses nothing,
-- whatever commits while it pages.

alter table app.note_counts
  add column last_change bigint not null default 0,
  add column changes_pruned_through bigint not null default 0;
comment on column app.note_counts.last_change is
  'The user''s change sequence: the number of the latest change to their notes (insert, update or delete).';
comment on column app.note_counts.changes_pruned_through is
  'The highest change number among the user''s pruned tombstones: a changes cursor before it has lost deletions.';

alter table public.notes add column change_seq bigint;
comment on column public.notes.change_seq is
  'The number of the note''s latest change in its owner''s change sequence (app.note_counts.last_change).';

-- Existing notes are numbered per owner in the order they were last changed. Only the number is written,
-- so the triggers (which would move versions and counts) are held off for it.
alter table public.notes disable trigger user;
update public.notes as n
set change_seq = numbered.seq
from (
  select id, row_number() over (partition by created_by order by updated_at, id) as seq from public.notes
) as numbered
where n.id = numbered.id;
alter table public.notes enable trigger user;
update app.note_counts as c
set last_change = coalesce((select max(n.change_seq) from public.notes as n where n.created_by = c.user_id), 0);
alter table public.notes alter column change_seq set not null;

create unique index notes_owner_changes_idx on public.notes (created_by, change_seq);

-- The deleted notes, for as long as a changes cursor may still need them (NOTES_TOMBSTONE_DAYS, pruned by
-- the service's schedule). No foreign key to the owner: notes deleted with their owner must not make a
-- tombstone that refers to a row going away in the same statement; the trigger skips those instead.
create table public.note_tombstones (
  note_id uuid primary key,
  created_by uuid not null,
  change_seq bigint not null,
  deleted_at timestamptz not null default now()
);
comment on table public.note_tombstones is
  'Notes deleted in the last NOTES_TOMBSTONE_DAYS, by the number of their deletion in the owner''s change sequence; visible to their owner only (RLS).';
create unique index note_tombstones_owner_changes_idx on public.note_tombstones (created_by, change_seq);
create index note_tombstones_deleted_idx on public.note_tombstones (deleted_at);

alter table public.note_tombstones enable row level security;
alter table public.note_tombstones force row level security;
revoke all on table public.note_tombstones from anon, authenticated, public;
-- Written only by the delete trigger (security definer); the owner may read them.
grant select on table public.note_tombstones to authenticated;
create policy "active owners read their tombstones" on public.note_tombstones
  for select to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()));

-- Takes the next number of `owner`'s change sequence, locking their counter row until the transaction
-- ends. Null when the owner has no counter (an owner being deleted).
create function app.next_note_change(owner uuid) returns bigint
language sql volatile
security definer
set search_path = ''
as $$
  update app.note_counts set last_change = last_change + 1 where user_id = next_note_change.owner
  returning last_change
$$;
revoke all on function app.next_note_change(uuid) from public, anon, authenticated;

create function app.number_note_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- A user's first note creates their counter; the statement's count trigger then counts the note.
  if tg_op = 'INSERT' then
    insert into app.note_counts (user_id) values (new.created_by) on conflict (user_id) do nothing;
  end if;
  new.change_seq := app.next_note_change(new.created_by);
  return new;
end;
$$;
revoke all on function app.number_note_change() from public, anon, authenticated;

create function app.leave_note_tombstone() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  seq bigint;
begin
  -- Notes deleted with their owner leave none: the owner is gone from app.users by then.
  if not exists (select from app.users where id = old.created_by) then
    return null;
  end if;
  seq := app.next_note_change(old.created_by);
  if seq is not null then
    insert into public.note_tombstones (note_id, created_by, change_seq) values (old.id, old.created_by, seq);
  end if;
  return null;
end;
$$;
revoke all on function app.leave_note_tombstone() from public, anon, authenticated;

create trigger notes_number_change
before insert or update on public.notes
for each row execute function app.number_note_change();

create trigger notes_leave_tombstone
after delete on public.notes
for each row execute function app.leave_note_tombstone();

-- Where the JWT caller's change sequence stands: its latest number and the highest one pruned.
create function app.caller_change_position(out last_change bigint, out pruned_through bigint)
language sql stable
security definer
set search_path = ''
as $$
  select coalesce(max(c.last_change), 0), coalesce(max(c.changes_pruned_through), 0)
  from app.note_counts as c
  where c.user_id = (select auth.uid())
$$;
comment on function app.caller_change_position() is
  'The JWT caller''s latest change number and the highest number among their pruned tombstones.';
revoke all on function app.caller_change_position() from public, anon;
grant execute on function app.caller_change_position() to authenticated;

-- Deletes up to `batch` tombstones older than `keep_days`, oldest first, and moves each owner's
-- pruned-through mark past them, so a cursor that needed them is told to start over.
create function app.prune_note_tombstones(keep_days integer, batch integer) returns integer
language sql volatile
security definer
set search_path = ''
as $$
  with pruned as (
    delete from public.note_tombstones
    where note_id in (
      select note_id from public.note_tombstones
      where deleted_at < now() - pg_catalog.make_interval(days => keep_days)
      order by deleted_at
      limit batch
    )
    returning created_by, change_seq
  ), marks as (
    update app.note_counts as c
    set changes_pruned_through = greatest(c.changes_pruned_through, p.through)
    from (select created_by, max(change_seq) as through from pruned group by created_by) as p
    where c.user_id = p.created_by
    returning 1
  )
  select count(*)::integer from pruned
$$;
comment on function app.prune_note_tombstones(integer, integer) is
  'Deletes up to `batch` tombstones older than `keep_days` and records how far each owner''s were pruned.';
revoke all on function app.prune_note_tombstones(integer, integer) from public, anon, authenticated;
