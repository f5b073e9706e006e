-- Attachments (issue 47): files in notes. The bytes live in object storage (a private Supabase Storage bucket on
-- hosted, local disk behind the same Storage endpoints on the local stack), never in Postgres; what Postgres holds
-- is who owns each file, the limits, and what must be removed from the store. The rules hold by every route, the
-- Data API included:
--
-- - an attachment belongs to a note and to that note's owner (a composite foreign key: the owner moves with the
--   note in a merge, and the row goes with the note or the account); its policies are the notes' own;
-- - the object's path is chosen here (the owner's id and the attachment's id, a random uuid), never by a client:
--   the API roles may insert only the note, name, type and size;
-- - the insert is the reservation: one trigger locks the note and the owner's counter, then checks the size per
--   file, the account's quota (the sum of its attachments' sizes, pending reservations included) and the 20 per
--   note, so concurrent uploads cannot together pass a limit;
-- - an anonymous account attaches nothing (PT403 'anonymous_attachment', the functions' sign_up_required);
-- - every deleted attachment row queues its object for removal in the same transaction (app.attachment_removals),
--   whether it was deleted itself, with its note, or with its account; a dispatcher retries until the store
--   confirms;
-- - a ready attachment counts on its note (public.notes.attachments): becoming ready or being deleted is a change of
--   the note, numbered in the changes feed and announced to streams, without moving the note's version.

alter table app.settings
  add column attachment_max_bytes bigint not null default 10485760
    check (attachment_max_bytes between 1 and 2147483647),
  add column attachment_quota_bytes bigint not null default 104857600
    check (attachment_quota_bytes between 1 and 2147483647);
comment on column app.settings.attachment_max_bytes is
  'ATTACHMENT_MAX_BYTES: the largest attachment; a larger reservation is refused (PT413).';
comment on column app.settings.attachment_quota_bytes is
  'ATTACHMENT_QUOTA_BYTES: the sum of the sizes of one account''s attachments, pending ones included (PT413).';

alter table public.notes add column attachments integer not null default 0 check (attachments >= 0);
comment on column public.notes.attachments is
  'How many ready attachments the note has; kept by the triggers of public.attachments.';
-- The count is the triggers' to keep: the API role changes a note's title, content and status only.
revoke update on table public.notes from authenticated;
grant update (title, content, status) on table public.notes to authenticated;

-- The composite key the attachments refer to: an attachment's owner is its note's owner, in every row.
alter table public.notes add constraint notes_id_owner_key unique (id, created_by);

create table public.attachments (
  id uuid primary key default gen_random_uuid(),
  note_id uuid not null,
  created_by uuid not null default auth.uid(),
  -- Set by app.reserve_attachment, whatever an insert gives: <owner>/<id>, random, so no one can name another's object.
  object_path text not null unique,
  name text not null check (char_length(name) between 1 and 255 and name !~ '[[:cntrl:]/\\]'),
  content_type text not null check (content_type in (
    'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain', 'text/markdown'
  )),
  size bigint not null check (size between 1 and 2147483647),
  state text not null default 'pending' check (state in ('pending', 'ready')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- A signed upload URL of Supabase Storage lives 2 hours: a pending upload outlives every URL made for it.
  expires_at timestamptz default now() + interval '125 minutes',
  constraint attachments_note_owner_fkey foreign key (note_id, created_by)
    references public.notes (id, created_by) on delete cascade on update cascade,
  constraint attachments_pending_expire check ((state = 'pending') = (expires_at is not null))
);
comment on table public.attachments is
  'Files attached to notes: the bytes are in object storage at object_path; each row is its note owner''s only (RLS).';
comment on column public.attachments.state is
  'pending from the reservation until the function has checked the stored bytes; then ready.';
comment on column public.attachments.expires_at is
  'When a pending upload is given up: the row is deleted and its object queued for removal.';
create index attachments_owner_idx on public.attachments (created_by, note_id);
create index attachments_note_idx on public.attachments (note_id, created_at);
create index attachments_expiry_idx on public.attachments (expires_at) where state = 'pending';

alter table public.attachments enable row level security;
alter table public.attachments force row level security;
revoke all on table public.attachments from anon, authenticated, public;
grant select, delete on table public.attachments to authenticated;
-- Never the path, the owner, the state or the times: those are the server's.
grant insert (note_id, name, content_type, size) on table public.attachments to authenticated;

create policy "active owners read their attachments" on public.attachments
  for select to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()));
create policy "active owners attach to their notes" on public.attachments
  for insert to authenticated
  with check (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes())
  );
create policy "active owners delete their attachments" on public.attachments
  for delete to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()));

-- Objects to remove from the store, until it confirms.
create table app.attachment_removals (
  object_path text primary key,
  queued_at timestamptz not null default now(),
  -- A pending upload's signed URL may still take bytes until it expires: its object is removed again after that.
  settle_at timestamptz not null default now(),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text
);
comment on table app.attachment_removals is
  'Objects whose attachment row is gone: the removal dispatcher deletes them from the store, retrying with backoff until it confirms a removal at or after settle_at, and then the row.';
create index attachment_removals_due_idx on app.attachment_removals (next_attempt_at);
revoke all on table app.attachment_removals from public, anon, authenticated;

-- The reservation: the limits, checked under the locks that serialise every reservation of the owner.
create function app.reserve_attachment() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  on_note integer;
  used bigint;
  limits app.settings;
begin
  if exists (select 1 from app.users u where u.id = new.created_by and u.is_anonymous) then
    raise sqlstate 'PT403' using message = 'anonymous_attachment',
      detail = 'An anonymous account attaches files only once it has signed up.';
  end if;
  -- The note first, as its writes take it, then the owner's counter, as the note triggers do: one order, no deadlock.
  perform 1 from public.notes n where n.id = new.note_id and n.created_by = new.created_by for no key update;
  if not found then
    -- The foreign key would refuse it too (23503, which the functions read as an account deleted meanwhile); this
    -- says the note is no note of the owner's (PostgREST: 404).
    raise sqlstate 'PT404' using message = 'attachment_note_missing';
  end if;
  perform 1 from app.note_counts c where c.user_id = new.created_by for update;
  -- The owner's folder keeps the bucket browsable by account; the id, a random uuid, makes the path unguessable.
  new.object_path := new.created_by::text || '/' || new.id::text;
  new.state := 'pending';
  new.expires_at := now() + interval '125 minutes';
  select * into limits from app.settings;
  if new.size > limits.attachment_max_bytes then
    raise sqlstate 'PT413' using message = 'attachment_too_large';
  end if;
  select count(*) filter (where a.note_id = new.note_id), coalesce(sum(a.size), 0)
  into on_note, used
  from public.attachments a where a.created_by = new.created_by;
  if on_note >= 20 then
    raise sqlstate 'PT409' using message = 'attachment_limit';
  end if;
  if used + new.size > limits.attachment_quota_bytes then
    raise sqlstate 'PT413' using message = 'attachment_quota';
  end if;
  return new;
end;
$$;
comment on function app.reserve_attachment() is
  'Before an insert into public.attachments: refuses an anonymous owner, then, holding the note and the owner''s counter, a file over app.settings.attachment_max_bytes, a 21st on the note, or one past the owner''s quota.';
revoke all on function app.reserve_attachment() from public, anon, authenticated;
create trigger attachments_reserve
before insert on public.attachments
for each row execute function app.reserve_attachment();

-- A ready attachment counts on its note; a change of the count is a change of the note.
create function app.count_note_attachments() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' and old.state = 'pending' and new.state = 'ready' then
    update public.notes n set attachments = n.attachments + 1 where n.id = new.note_id;
  elsif tg_op = 'DELETE' then
    -- Kept until the upload URL is dead whatever the file's state: the URL is no one-time token (Storage's signed
    -- upload URL is not), so bytes put to it again after a removal are removed again, not left behind unaccounted.
    insert into app.attachment_removals (object_path, settle_at)
    values (old.object_path, greatest(now(), old.created_at + interval '125 minutes'))
    on conflict (object_path) do nothing;
    if old.state = 'ready' then
      -- With its note: the note is already gone, and this finds nothing.
      update public.notes n set attachments = n.attachments - 1 where n.id = old.note_id;
    end if;
  end if;
  return null;
end;
$$;
comment on function app.count_note_attachments() is
  'After an attachment becomes ready or is deleted: counts it on its note (a change of the note) and queues a deleted one''s object for removal, in the same transaction.';
revoke all on function app.count_note_attachments() from public, anon, authenticated;
create trigger attachments_count
after update of state or delete on public.attachments
for each row execute function app.count_note_attachments();

create function app.touch_attachment() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
revoke all on function app.touch_attachment() from public, anon, authenticated;
create trigger attachments_touch
before update on public.attachments
for each row execute function app.touch_attachment();

-- A change of the attachment count moves the note's change number (the feed, the streams), not its version: a
-- device editing the note with expectedUpdatedAt is not refused because a photo arrived.
create or replace function app.advance_note_version() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.attachments is distinct from old.attachments
     and (new.title, new.content, new.status, new.created_by) is not distinct from
         (old.title, old.content, old.status, old.created_by) then
    return new;
  end if;
  new.updated_at := greatest(now(), date_trunc('milliseconds', old.updated_at) + interval '1 millisecond');
  return new;
end;
$$;

-- The versioned writes answer the note with its attachment count, as every other note statement does.
drop function app.save_note_version(uuid, uuid, text, text, text, timestamptz);
create function app.save_note_version(
  note_id uuid,
  owner uuid,
  new_title text,
  new_content text,
  new_status text,
  expected_updated_at timestamptz
) returns table (
  id uuid, created_by uuid, title text, content text, status text, created_at timestamptz, updated_at timestamptz,
  attachments integer, written boolean
)
language plpgsql volatile
set search_path = ''
as $$
begin
  return query
    update public.notes n
    set title = coalesce(new_title, n.title),
        content = coalesce(new_content, n.content),
        status = coalesce(new_status, n.status)
    where n.id = note_id and n.created_by = owner and date_trunc('milliseconds', n.updated_at) = expected_updated_at
    returning n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, n.attachments, true;
  if not found then
    return query
      select n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, n.attachments, false
      from public.notes n
      where n.id = note_id and n.created_by = owner;
  end if;
end;
$$;
revoke all on function app.save_note_version(uuid, uuid, text, text, text, timestamptz) from public, anon;
grant execute on function app.save_note_version(uuid, uuid, text, text, text, timestamptz) to authenticated;

drop function app.delete_note_version(uuid, uuid, timestamptz);
create function app.delete_note_version(note_id uuid, owner uuid, expected_updated_at timestamptz)
returns table (
  id uuid, created_by uuid, title text, content text, status text, created_at timestamptz, updated_at timestamptz,
  attachments integer, written boolean
)
language plpgsql volatile
set search_path = ''
as $$
begin
  return query
    delete from public.notes n
    where n.id = note_id and n.created_by = owner and date_trunc('milliseconds', n.updated_at) = expected_updated_at
    returning n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, n.attachments, true;
  if not found then
    return query
      select n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, n.attachments, false
      from public.notes n
      where n.id = note_id and n.created_by = owner;
  end if;
end;
$$;
revoke all on function app.delete_note_version(uuid, uuid, timestamptz) from public, anon;
grant execute on function app.delete_note_version(uuid, uuid, timestamptz) to authenticated;
