-- Idempotent creates. A client names a create with an Idempotency-Key; the key,
-- a hash of the request and the id of the note it made are recorded in the same
-- statement that makes the note. A repeat within 24 hours finds the key and makes
-- nothing; a concurrent repeat waits on the key's unique index for the first to
-- commit or roll back. Keys belong to their user: the primary key starts with it.

create table app.note_create_keys (
  user_id uuid not null references app.users (id) on delete cascade,
  key text not null check (key ~ '^[!-~]{1,255}$'),
  -- SHA-256 of the create's title, content and status, so a key reused for another note is told apart.
  request_hash text not null,
  note_id uuid not null default gen_random_uuid(),
  created_at timestamptz not null default now(),
  primary key (user_id, key)
);
comment on table app.note_create_keys is
  'Idempotency-Key of each create (per user) for 24 hours: which note it made, and the hash of the request that made it.';
comment on column app.note_create_keys.created_at is
  'When the key was used; equal to the note''s created_at and its first updated_at. Expired after 24 hours.';
-- Like every table of schema app, out of the API roles' reach; callers go through the functions below.
revoke all on table app.note_create_keys from public, anon, authenticated;

-- The mail drain's pruning of expired keys, oldest first.
create index note_create_keys_created_idx on app.note_create_keys (created_at);

-- Claims key `key` of the JWT caller for a create with fingerprint `request_hash`, and answers the id the
-- new note must take, or null when the key is taken (by an earlier create within 24 hours, or by one still
-- in flight, which this waits for). An expired key is taken over. Security definer because `authenticated`
-- may not write app.note_create_keys; the caller is always auth.uid(), so no one claims another's key.
create function app.claim_note_create_key(key text, request_hash text) returns uuid
language sql volatile
security definer
set search_path = ''
as $$
  insert into app.note_create_keys as used (user_id, key, request_hash)
  values ((select auth.uid()), claim_note_create_key.key, claim_note_create_key.request_hash)
  on conflict (user_id, key) do update
    set request_hash = excluded.request_hash, note_id = excluded.note_id, created_at = excluded.created_at
    where used.created_at <= now() - interval '24 hours'
  returning note_id
$$;
comment on function app.claim_note_create_key(text, text) is
  'Claims the JWT caller''s Idempotency-Key for a create; the new note''s id, or null when the key is taken.';
revoke all on function app.claim_note_create_key(text, text) from public, anon;
grant execute on function app.claim_note_create_key(text, text) to authenticated;

-- What the JWT caller's key `key` made: the note's id, the fingerprint of the request and when.
create function app.caller_note_create_key(key text)
returns table (note_id uuid, request_hash text, created_at timestamptz)
language sql stable
security definer
set search_path = ''
as $$
  select k.note_id, k.request_hash, k.created_at from app.note_create_keys as k
  where k.user_id = (select auth.uid()) and k.key = caller_note_create_key.key
$$;
comment on function app.caller_note_create_key(text) is
  'The note id, request fingerprint and time of the JWT caller''s Idempotency-Key, if it has been used.';
revoke all on function app.caller_note_create_key(text) from public, anon;
grant execute on function app.caller_note_create_key(text) to authenticated;
