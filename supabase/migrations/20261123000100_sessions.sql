-- Sessions: every login, register and password set with a code starts one.
-- Access tokens carry its id (claim session_id) and the statement that opens
-- every caller's transaction requires it to be live, so a sign-out, a
-- revocation, a suspension or a timeout takes effect on the next request.
-- Refresh tokens are never stored: the functions derive each generation's
-- token with an HMAC under a server key, so a copy of this table yields none.

create table app.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  -- Raised by each refresh; the refresh token of generation N stops working once N + 1 is issued.
  generation integer not null default 0 check (generation >= 0),
  created_at timestamptz not null default now(),
  -- When the current generation was issued: the idle timeout and the reuse grace count from here.
  refreshed_at timestamptz not null default now(),
  -- The earlier of the idle and the absolute deadline, as the functions' settings put it at each refresh.
  expires_at timestamptz not null,
  user_agent text check (char_length(user_agent) <= 512),
  address text check (char_length(address) <= 100),
  revoked_at timestamptz,
  revoked_reason text check (revoked_reason in (
    'logout', 'logout_others', 'logout_global', 'session_ended', 'refresh_token_reused',
    'password_changed', 'account_suspended'
  )),
  check ((revoked_at is null) = (revoked_reason is null))
);
comment on table app.sessions is
  'One row per signed-in device. Live while revoked_at is null and expires_at is in the future; ended rows are pruned.';
comment on column app.sessions.generation is
  'The refresh token generation in force. Its predecessor is accepted for the grace after refreshed_at; any older one revokes the session.';
comment on column app.sessions.address is 'The client address at sign-in, so the user can recognise the session.';
create index sessions_user_id_idx on app.sessions (user_id);
-- Pruning finds ended sessions by these two.
create index sessions_expires_at_idx on app.sessions (expires_at);
create index sessions_revoked_at_idx on app.sessions (revoked_at) where revoked_at is not null;
revoke all on table app.sessions from public, anon, authenticated;

-- A password change or a suspension raises token_version (users_revoke_tokens); the account's sessions end with it.
create function app.end_sessions_on_credential_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  update app.sessions s
  set revoked_at = now(),
      revoked_reason = case when new.status = 'SUSPENDED' and old.status is distinct from 'SUSPENDED'
                            then 'account_suspended' else 'password_changed' end
  where s.user_id = new.id and s.revoked_at is null;
  return null;
end;
$$;
revoke all on function app.end_sessions_on_credential_change() from public;

-- Not `update of token_version`: that fires only when the statement names the column, and the raise is the
-- users_revoke_tokens trigger's, whatever the statement names.
create trigger users_end_sessions
after update on app.users
for each row when (new.token_version is distinct from old.token_version)
execute function app.end_sessions_on_credential_change();

-- Starts a session for `owner`, expiring after the shorter of the idle and absolute timeouts, and prunes
-- that user's sessions that ended over a day ago (see app.prune_sessions for why a day).
create function app.start_session(
  owner uuid,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns table (session_id uuid, session_generation integer)
language sql
set search_path = ''
as $$
  delete from app.sessions s
  where s.user_id = owner
    and (s.revoked_at <= now() - interval '1 day' or s.expires_at <= now() - interval '1 day');
  insert into app.sessions (user_id, expires_at, user_agent, address)
  values (
    owner,
    now() + make_interval(secs => least(idle_seconds, max_lifetime_seconds)),
    left(client_user_agent, 512),
    left(client_address, 100)
  )
  returning id, generation;
$$;
comment on function app.start_session(uuid, integer, integer, text, text) is
  'Starts a session for the user and prunes the user''s ended sessions; returns its id and generation (0).';
revoke all on function app.start_session(uuid, integer, integer, text, text) from public, anon, authenticated;

-- Ended and expired sessions of users who never sign in again, a batch at a time; called by each refresh,
-- so the table stays bounded without a schedule. An ended session is kept a day, so a refresh with its
-- token meanwhile is told the session was revoked or expired rather than that the token is unknown.
create function app.prune_sessions(batch integer) returns void
language sql
set search_path = ''
as $$
  delete from app.sessions s
  where s.id in (
    select e.id from app.sessions e
    where e.expires_at <= now() - interval '1 day' or e.revoked_at <= now() - interval '1 day'
    limit batch for update skip locked
  )
$$;
revoke all on function app.prune_sessions(integer) from public, anon, authenticated;

-- The outcome of app.refresh_session: 'refreshed', 'invalid', 'expired', 'revoked' or 'reused'.
create function app.refresh_session(
  target_session uuid,
  presented_generation integer,
  grace_seconds integer,
  idle_seconds integer,
  max_lifetime_seconds integer
) returns table (
  outcome text,
  session_id uuid,
  session_generation integer,
  id uuid,
  name text,
  phone_number text,
  email text,
  role text,
  status text,
  is_verified boolean,
  created_at timestamptz,
  updated_at timestamptz,
  token_version integer
)
language plpgsql
set search_path = ''
as $$
declare
  current app.sessions%rowtype;
begin
  perform app.prune_sessions(2);
  -- Locked, so concurrent refreshes of one session run one after another and see each other's rotation.
  select * into current from app.sessions s where s.id = target_session for update;
  if not found or presented_generation > current.generation then
    return query select 'invalid', null::uuid, null::integer, null::uuid, null, null, null, null, null,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  if current.revoked_at is not null then
    return query select 'revoked', null::uuid, null::integer, null::uuid, null, null, null, null, null,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  if current.expires_at <= now() then
    return query select 'expired', null::uuid, null::integer, null::uuid, null, null, null, null, null,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  if presented_generation = current.generation then
    update app.sessions s
    set generation = s.generation + 1,
        refreshed_at = now(),
        expires_at = least(s.created_at + make_interval(secs => max_lifetime_seconds),
                           now() + make_interval(secs => idle_seconds))
    where s.id = current.id
    returning * into current;
  elsif presented_generation < current.generation - 1
        or current.refreshed_at < now() - make_interval(secs => grace_seconds) then
    -- A replaced token after its grace, or an older one: someone holds a copy. The whole session ends,
    -- and the statement commits, so the thief's copy and the owner's current token both stop working.
    update app.sessions s set revoked_at = now(), revoked_reason = 'refresh_token_reused' where s.id = current.id;
    return query select 'reused', null::uuid, null::integer, null::uuid, null, null, null, null, null,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  -- Rotated just now, or the predecessor within its grace: both answer the current generation, so
  -- concurrent refreshes (two tabs, a retry) converge on one token.
  return query
    select 'refreshed', current.id, current.generation, u.id, u.name, u.phone_number, u.email, u.role,
           u.status, u.is_verified, u.created_at, u.updated_at, u.token_version
    from app.users u where u.id = current.user_id;
end;
$$;
comment on function app.refresh_session(uuid, integer, integer, integer, integer) is
  'Rotates the session''s refresh token generation, accepts its predecessor within the grace, and revokes the session on any other reuse.';
revoke all on function app.refresh_session(uuid, integer, integer, integer, integer) from public, anon, authenticated;

-- The caller is active only while its token's session is live too. A token without session_id
-- (issued before sessions existed) is refused: its session cannot be ended, so it may not be used.
create or replace function app.caller_is_active() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select exists (
    select from app.users u
    cross join lateral (select nullif(current_setting('request.jwt.claims', true), '')::jsonb as claims) c
    join app.sessions s
      on s.id = case when jsonb_typeof(c.claims -> 'session_id') = 'string'
                          and (c.claims ->> 'session_id') ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
                     then (c.claims ->> 'session_id')::uuid end
    where u.id = (select auth.uid())
      and u.status = 'ACTIVE'
      -- A token without the claim counts as version 0, as the functions read it.
      and jsonb_typeof(coalesce(c.claims -> 'token_version', '0')) = 'number'
      and u.token_version::numeric = coalesce(c.claims ->> 'token_version', '0')::numeric
      and s.user_id = u.id
      and s.revoked_at is null
      and s.expires_at > now()
  )
$$;
comment on function app.caller_is_active() is
  'Whether the JWT caller still exists, is ACTIVE, holds a token of the current token_version, and its session is live.';

-- Refreshes are limited per client address like sign-ups and code attempts.
alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'signup-address', 'reset-address', 'reset-code-account', 'refresh-address'
));
