-- REQUIRE_EMAIL_VERIFICATION enforced by Postgres itself. The functions used to pass the setting to the statement
-- that opens a notes request, so only they refused an unverified caller; a token of that caller read and wrote its
-- notes through the Data API, where no function runs. The setting now lives in the database (app.settings, written
-- by `npm run db:push` and by the local stack at start), and the notes policies, the security definer functions the
-- notes requests call, and the opening statement all read it there.

-- One row: the settings the database enforces whoever connects.
create table app.settings (
  singleton boolean primary key default true check (singleton),
  require_email_verification boolean not null default false
);
comment on table app.settings is
  'Settings Postgres enforces itself (one row), written by npm run db:push and by the local stack at start.';
comment on column app.settings.require_email_verification is
  'REQUIRE_EMAIL_VERIFICATION: when true, an account whose address is not verified reaches no note, by any route.';
revoke all on table app.settings from public, anon, authenticated;
insert into app.settings default values;

-- False only while the database requires verified addresses and the JWT caller's is not. Security definer because
-- `authenticated` may read neither app.settings nor app.users.
create function app.caller_verified_as_required() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select not coalesce((select s.require_email_verification from app.settings s), false)
    or exists (select from app.users u where u.id = (select auth.uid()) and u.is_verified)
$$;
comment on function app.caller_verified_as_required() is
  'False while app.settings requires verified addresses and the JWT caller''s address is not verified.';
revoke all on function app.caller_verified_as_required() from public, anon;
grant execute on function app.caller_verified_as_required() to authenticated;

-- The statement that opens every notes request of the functions: PT401 for a revoked caller, PT403 for one whose
-- address the database requires verified, before any notes query runs and in the same round trip.
create function app.require_notes_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  perform app.require_active_caller();
  if not app.caller_verified_as_required() then
    raise sqlstate 'PT403' using message = 'email address not verified';
  end if;
end;
$$;
comment on function app.require_notes_caller() is
  'Raises PT401 unless the caller is active (app.require_active_caller), and PT403 unless app.caller_verified_as_required().';
revoke all on function app.require_notes_caller() from public, anon;
grant execute on function app.require_notes_caller() to authenticated;

-- The check moved to app.require_notes_caller; the auth endpoints that act for a signed-in caller keep this one,
-- which never asked for a verified address (an unverified account signs out, lists its sessions, verifies).
create or replace function app.require_active_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not app.caller_is_active() then
    raise sqlstate 'PT401' using message = 'access token revoked or account inactive';
  end if;
end;
$$;
comment on function app.require_active_caller() is
  'Raises PT401 unless app.caller_is_active(); run when a caller''s transaction starts.';

-- The policies: each check in its own init-plan (`(select ...)`), so it runs once per statement, not per row.
alter policy "active owners read their notes" on public.notes
  using (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  );
alter policy "active owners create their notes" on public.notes
  with check (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  );
alter policy "active owners change their notes" on public.notes
  using (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  )
  with check (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  );
alter policy "active owners delete their notes" on public.notes
  using (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  );
alter policy "active owners read their tombstones" on public.note_tombstones
  using (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_verified_as_required())
  );

-- The security definer functions `authenticated` may call read and write past the policies, so each applies the
-- same check: reads find nothing, as under the policies, and a write is refused as a policy refuses one (42501).

create or replace function app.caller_note_count() returns integer
language sql stable
security definer
set search_path = ''
as $$
  select coalesce((
    select notes from app.note_counts
    where user_id = (select auth.uid()) and (select app.caller_verified_as_required())
  ), 0)
$$;

create or replace function app.caller_note_count(status text) returns integer
language sql stable
security definer
set search_path = ''
as $$
  select coalesce((
    select case caller_note_count.status when 'PUBLISHED' then c.published else c.notes - c.published end
    from app.note_counts as c
    where c.user_id = (select auth.uid()) and (select app.caller_verified_as_required())
  ), 0)
$$;

create or replace function app.caller_note_matches(words text) returns setof uuid
language sql stable
rows 10
security definer
set search_path = ''
as $$
  select w.note_id from app.note_words as w
  where w.created_by = (select auth.uid()) and w.words @@ app.note_search_query(caller_note_matches.words)
    and (select app.caller_verified_as_required())
$$;

create or replace function app.caller_change_position(out last_change bigint, out pruned_through bigint)
language sql stable
security definer
set search_path = ''
as $$
  select coalesce(max(c.last_change), 0), coalesce(max(c.changes_pruned_through), 0)
  from app.note_counts as c
  where c.user_id = (select auth.uid()) and (select app.caller_verified_as_required())
$$;

create or replace function app.caller_note_create_key(key text)
returns table (note_id uuid, request_hash text, created_at timestamptz)
language sql stable
security definer
set search_path = ''
as $$
  select k.note_id, k.request_hash, k.created_at from app.note_create_keys as k
  where k.user_id = (select auth.uid()) and k.key = caller_note_create_key.key
    and (select app.caller_verified_as_required())
$$;

-- Now PL/pgSQL, to refuse before it writes.
create or replace function app.claim_note_create_key(key text, request_hash text) returns uuid
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  claimed uuid;
begin
  if not app.caller_verified_as_required() then
    raise exception 'email address not verified' using errcode = 'insufficient_privilege';
  end if;
  insert into app.note_create_keys as used (user_id, key, request_hash)
  values ((select auth.uid()), claim_note_create_key.key, claim_note_create_key.request_hash)
  on conflict on constraint note_create_keys_pkey do update
    set request_hash = excluded.request_hash, note_id = excluded.note_id, created_at = excluded.created_at
    where used.created_at <= now() - interval '24 hours'
  returning used.note_id into claimed;
  return claimed;
end;
$$;
