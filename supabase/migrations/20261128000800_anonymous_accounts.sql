-- Anonymous accounts (issue 48, first half): a visitor writes notes before signing up. An anonymous account is a
-- real account (its own id, sessions, notes under the same policies) with app.users.is_anonymous set, no email and
-- no password. Postgres holds the rules, so they hold by every route, the Data API included:
--
-- - an anonymous account owns at most app.settings.anonymous_note_limit notes (100); the insert trigger that counts
--   a note refuses the one past it with SQLSTATE PT403 (PostgREST answers 403), message 'anonymous_note_limit';
-- - an anonymous account adds no second factor and no passkey (PT403, 'anonymous_account');
-- - an upgrade (the account's email and password hash set, is_anonymous cleared) keeps the id, so every note, its
--   numbers and the changes feed stay as they were, and, as a first password replaces none, ends no session.

alter table app.users add column is_anonymous boolean not null default false;
comment on column app.users.is_anonymous is
  'True for an account started by POST /auth/anonymous until it is upgraded: no email, no password, a capped number of notes, no second factor or passkey.';
alter table app.users alter column email drop not null;
alter table app.users add constraint users_email_unless_anonymous check (is_anonymous or email is not null);

alter table app.settings add column anonymous_note_limit integer not null default 100
  check (anonymous_note_limit between 0 and 1000000);
comment on column app.settings.anonymous_note_limit is
  'The notes an anonymous account may own; the insert past it is refused (PT403) until the account signs up.';

-- The per-address bucket of new anonymous accounts, added to whatever buckets the constraint allows now (another
-- migration of the same day may have added its own).
do $$
declare
  allowed text;
begin
  select pg_get_constraintdef(oid) into allowed
  from pg_constraint where conrelid = 'app.rate_limits'::regclass and conname = 'rate_limits_bucket_check';
  if strpos(allowed, '''anonymous-address''') = 0 then
    alter table app.rate_limits drop constraint rate_limits_bucket_check;
    execute format(
      'alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket = %L or %s)',
      'anonymous-address', substring(allowed from '^CHECK \((.*)\)$'));
  end if;
end;
$$;

-- The insert trigger of 20261128000500, with the cap: the owner's total is what the counter update returns; the
-- one more read is of the owner's row by its key, which a write through the functions has just locked.
create or replace function app.take_inserted_note() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  announced text;
  total integer;
begin
  update app.note_counts as c
  set last_change = c.last_change + 1,
      notes = c.notes + 1,
      published = c.published + (new.status = 'PUBLISHED')::integer
  where c.user_id = new.created_by
  returning c.last_change, c.notes into new.change_seq, total;
  if not found then
    -- A user's first note creates their counter; a concurrent first note waits for this one and counts on it.
    insert into app.note_counts as c (user_id, notes, published, last_change)
    values (new.created_by, 1, (new.status = 'PUBLISHED')::integer, 1)
    on conflict (user_id) do update
      set last_change = c.last_change + 1, notes = c.notes + 1, published = c.published + excluded.published
    returning c.last_change, c.notes into new.change_seq, total;
  end if;
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  -- The counter row stays locked until commit, so two concurrent inserts cannot both pass the cap.
  if exists (
    select 1 from app.users u, app.settings s
    where u.id = new.created_by and u.is_anonymous and total > s.anonymous_note_limit
  ) then
    raise sqlstate 'PT403' using message = 'anonymous_note_limit',
      detail = 'An anonymous account keeps a limited number of notes; sign up to write more.';
  end if;
  insert into app.note_words (note_id, created_by, words)
  values (
    new.id,
    new.created_by,
    pg_catalog.to_tsvector(
      'pg_catalog.simple',
      extensions.unaccent('extensions.unaccent'::regdictionary, new.title || ' ' || new.content)
    )
  );
  announced := coalesce(current_setting('app.announced_note_owners', true), '');
  if strpos(announced, new.created_by::text) = 0 then
    perform pg_notify('note_changes', new.created_by::text || ' ' || new.change_seq::text);
    perform set_config('app.announced_note_owners', announced || new.created_by::text || ' ', true);
  end if;
  return new;
end;
$$;
comment on function app.take_inserted_note() is
  'Before each insert into public.notes: counts the note and numbers its change in one update of the owner''s counter, refuses an anonymous owner''s note past app.settings.anonymous_note_limit, indexes its words, and sends the owner''s notice once per transaction.';
revoke all on function app.take_inserted_note() from public, anon, authenticated;

-- An upgrade gives an anonymous account its first password: no credential changes, so nothing issued before it
-- ends (the visitor's session goes on as the real account). Every other new password still ends them all.
create or replace function app.revoke_tokens_on_credential_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if (new.password_hash is distinct from old.password_hash
      and not (old.is_anonymous and old.password_hash is null and not new.is_anonymous))
     or (new.status = 'SUSPENDED' and old.status is distinct from 'SUSPENDED') then
    new.token_version := old.token_version + 1;
    new.device_generation := old.device_generation + 1;
  end if;
  return new;
end;
$$;

-- No second factor and no passkey for an account that has no address to recover it by.
create function app.refuse_anonymous_owner() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if exists (select 1 from app.users u where u.id = new.user_id and u.is_anonymous) then
    raise sqlstate 'PT403' using message = 'anonymous_account',
      detail = 'An anonymous account adds a second factor or a passkey only once it has signed up.';
  end if;
  return new;
end;
$$;
comment on function app.refuse_anonymous_owner() is
  'Before an insert of a second factor or a passkey: refuses an anonymous account''s.';
revoke all on function app.refuse_anonymous_owner() from public, anon, authenticated;

create trigger second_factors_not_anonymous
before insert on app.second_factors
for each row execute function app.refuse_anonymous_owner();
create trigger passkeys_not_anonymous
before insert on app.passkeys
for each row execute function app.refuse_anonymous_owner();
