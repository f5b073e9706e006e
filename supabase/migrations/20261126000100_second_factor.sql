-- A second factor: TOTP (RFC 6238: SHA-1, 6 digits, 30 s) with ten recovery codes, enforced by Postgres as well as
-- by the functions.
--
-- A session has a level: aal1 after a password (or a reset code), aal2 after a code of the account's factor or one
-- of its recovery codes. While an account has an active factor, an aal1 session reaches none of its notes (the
-- policies, and the security definer functions the notes requests call) and no account call (the opening
-- statements), by any route: it may only complete the second step, read the user and sign out. A session's level
-- never changes: the second step ends the aal1 session and starts an aal2 one, so a stolen aal1 token stays aal1.
--
-- A code is accepted once: the factor keeps the last time step it accepted, and the statement that accepts a step
-- requires it to be later, so two requests with one code (or ten at once) let one through. Wrong codes are counted
-- per factor, whoever sends them: five within the lockout make the factor refuse every code, right or wrong, until
-- it ends. The secret is sealed by the functions (AES-GCM under a key derived from a server secret, named by
-- secret_key_id so it can rotate); Postgres never sees it in the clear. Recovery codes are kept as keyed hashes only.

create table app.second_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  secret_sealed text not null check (char_length(secret_sealed) between 1 and 200),
  secret_key_id text not null check (secret_key_id ~ '^[a-z0-9-]{1,32}$'),
  created_at timestamptz not null default now(),
  -- Null while enrolment waits for its first code; the factor is enforced from then on.
  activated_at timestamptz,
  last_used_at timestamptz,
  -- The last accepted time step (Unix time / 30): a code of this step or an earlier one is refused.
  last_step bigint check (last_step >= 0),
  failures integer not null default 0 check (failures >= 0),
  failures_since timestamptz,
  locked_until timestamptz
);
comment on table app.second_factors is
  'An account''s TOTP factor (one at most, pending until its first code). The secret is sealed by the functions.';
comment on column app.second_factors.last_step is
  'The last accepted TOTP time step; a code of this step or an earlier one is never accepted again (RFC 6238 5.2).';
comment on column app.second_factors.failures is
  'Wrong codes since failures_since; at the limit the factor refuses every code until locked_until.';
create unique index second_factors_one_per_user on app.second_factors (user_id);
revoke all on table app.second_factors from public, anon, authenticated;

create table app.recovery_codes (
  user_id uuid not null references app.users (id) on delete cascade,
  -- HMAC-SHA256 of the code under a key derived from the server secret (hex): a copy of the table yields none.
  code_hash text not null check (code_hash ~ '^[0-9a-f]{64}$'),
  primary key (user_id, code_hash)
);
comment on table app.recovery_codes is
  'An account''s unused recovery codes, as keyed hashes; a used code''s row is deleted.';
revoke all on table app.recovery_codes from public, anon, authenticated;

alter table app.sessions
  add column aal text not null default 'aal1' check (aal in ('aal1', 'aal2')),
  add column second_factor text check (second_factor in ('totp', 'recovery_code')),
  add column second_factor_at timestamptz,
  add constraint sessions_aal_matches_second_factor
    check ((aal = 'aal2') = (second_factor is not null and second_factor_at is not null));
comment on column app.sessions.aal is
  'aal1 after a password or a reset code; aal2 after a code of the account''s factor. A session''s level never changes.';

alter table app.sessions drop constraint sessions_revoked_reason_check;
alter table app.sessions add constraint sessions_revoked_reason_check check (revoked_reason in (
  'logout', 'logout_others', 'logout_global', 'session_ended', 'refresh_token_reused', 'password_changed',
  'account_suspended', 'second_factor_verified', 'second_factor_changed'
));

alter table app.security_events drop constraint security_events_type_check;
alter table app.security_events add constraint security_events_type_check check (type in (
  'registered', 'login_succeeded', 'login_failed', 'login_refused_by_limit', 'password_reset_requested',
  'password_set_with_code', 'password_changed', 'email_verified', 'session_started', 'session_ended',
  'refresh_token_reused', 'account_suspended', 'account_reactivated', 'role_granted', 'role_revoked',
  'account_deleted', 'second_factor_added', 'second_factor_removed', 'second_factor_failed', 'second_factor_locked',
  'recovery_code_used', 'recovery_codes_replaced'
));

-- The session the JWT caller's claims name, or null for a missing or malformed claim.
create function app.claimed_session_id() returns uuid
language sql stable
set search_path = ''
as $$
  select case when (c.claims ->> 'session_id') ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
              then (c.claims ->> 'session_id')::uuid end
  from (select nullif(current_setting('request.jwt.claims', true), '')::jsonb as claims) c
$$;
revoke all on function app.claimed_session_id() from public, anon, authenticated;

-- False while the JWT caller's account has an active factor and the caller's session is not aal2.
create function app.caller_meets_second_factor() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select not exists (
      select from app.second_factors f where f.user_id = (select auth.uid()) and f.activated_at is not null
    )
    or exists (
      select from app.sessions s
      where s.id = (select app.claimed_session_id()) and s.user_id = (select auth.uid()) and s.aal = 'aal2'
    )
$$;
comment on function app.caller_meets_second_factor() is
  'False while the JWT caller''s account has an active second factor and the caller''s session is not aal2.';
revoke all on function app.caller_meets_second_factor() from public, anon, authenticated;

-- What a caller needs, besides being active, to reach notes: a verified address where the database requires one,
-- and the second factor where the account has one.
create function app.caller_reaches_notes() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select app.caller_verified_as_required() and app.caller_meets_second_factor()
$$;
comment on function app.caller_reaches_notes() is
  'app.caller_verified_as_required() and app.caller_meets_second_factor(): what the notes policies require besides an active caller.';
revoke all on function app.caller_reaches_notes() from public, anon;
grant execute on function app.caller_reaches_notes() to authenticated;

-- The opening statement of every notes request: PT401, PT403 as before, and PTMFA for an aal1 session of an
-- account with a factor.
create or replace function app.require_notes_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  perform app.require_active_caller();
  if not app.caller_verified_as_required() then
    raise sqlstate 'PT403' using message = 'email address not verified';
  end if;
  if not app.caller_meets_second_factor() then
    raise sqlstate 'PTMFA' using message = 'second factor required';
  end if;
end;
$$;

-- The opening statement of the account calls an aal1 session may not make (sessions, password, deletion, events,
-- the factor's management): PT401 for a revoked caller, PTMFA without the second factor.
create function app.require_full_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  perform app.require_active_caller();
  if not app.caller_meets_second_factor() then
    raise sqlstate 'PTMFA' using message = 'second factor required';
  end if;
end;
$$;
comment on function app.require_full_caller() is
  'Raises PT401 unless the caller is active, and PTMFA unless app.caller_meets_second_factor().';
revoke all on function app.require_full_caller() from public, anon, authenticated;

alter policy "active owners read their notes" on public.notes
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()));
alter policy "active owners create their notes" on public.notes
  with check (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes())
  );
alter policy "active owners change their notes" on public.notes
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()))
  with check (
    created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes())
  );
alter policy "active owners delete their notes" on public.notes
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()));
alter policy "active owners read their tombstones" on public.note_tombstones
  using (created_by = (select auth.uid()) and (select app.caller_is_active()) and (select app.caller_reaches_notes()));

-- The security definer functions the notes requests call apply the same check as the policies.
create or replace function app.caller_note_count() returns integer
language sql stable
security definer
set search_path = ''
as $$
  select coalesce((
    select notes from app.note_counts
    where user_id = (select auth.uid()) and (select app.caller_reaches_notes())
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
    where c.user_id = (select auth.uid()) and (select app.caller_reaches_notes())
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
    and (select app.caller_reaches_notes())
$$;

create or replace function app.caller_change_position(out last_change bigint, out pruned_through bigint)
language sql stable
security definer
set search_path = ''
as $$
  select coalesce(max(c.last_change), 0), coalesce(max(c.changes_pruned_through), 0)
  from app.note_counts as c
  where c.user_id = (select auth.uid()) and (select app.caller_reaches_notes())
$$;

create or replace function app.caller_note_create_key(key text)
returns table (note_id uuid, request_hash text, created_at timestamptz)
language sql stable
security definer
set search_path = ''
as $$
  select k.note_id, k.request_hash, k.created_at from app.note_create_keys as k
  where k.user_id = (select auth.uid()) and k.key = caller_note_create_key.key
    and (select app.caller_reaches_notes())
$$;

create or replace function app.claim_note_create_key(key text, request_hash text) returns uuid
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  claimed uuid;
begin
  if not app.caller_reaches_notes() then
    raise exception 'caller may not reach notes' using errcode = 'insufficient_privilege';
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

-- Admin work needs the second factor too, where the admin's account has one.
create or replace function app.require_admin() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not app.caller_is_active() then
    raise sqlstate 'PT401' using message = 'access token revoked or account inactive';
  end if;
  if not app.caller_meets_second_factor() then
    raise sqlstate 'PTMFA' using message = 'second factor required';
  end if;
  if not exists (select from app.users u where u.id = (select auth.uid()) and u.role = 'ADMIN') then
    raise sqlstate 'PTADM' using message = 'the caller is not an admin';
  end if;
end;
$$;

-- What a session's access token states about its level, read by every statement that starts or refreshes one:
-- the session's aal and how it got there, and the account's active factor (its id and sealed secret, which the
-- functions put in the token so that checking a code needs no read of its own).
create function app.session_level(target_session uuid) returns table (
  session_aal text,
  session_started_at timestamptz,
  second_factor text,
  second_factor_at timestamptz,
  factor_id uuid,
  factor_sealed text,
  factor_key_id text
)
language sql stable
set search_path = ''
as $$
  select s.aal, s.created_at, s.second_factor, s.second_factor_at, f.id, f.secret_sealed, f.secret_key_id
  from app.sessions s
  left join app.second_factors f on f.user_id = s.user_id and f.activated_at is not null
  where s.id = target_session
$$;
revoke all on function app.session_level(uuid) from public, anon, authenticated;

-- Sessions now start at a level: aal1 (a password or a code was proved), aal2 with the method of the second step,
-- or the level of `inherit_from`, the session of the same account whose owner proved the password again (a password
-- change keeps the level the caller had).
drop function app.start_session(uuid, integer, integer, text, text);
create function app.start_session(
  owner uuid,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text,
  verified_with text default null,
  inherit_from uuid default null
) returns table (
  session_id uuid,
  session_generation integer,
  device_generation integer,
  session_aal text,
  session_started_at timestamptz,
  second_factor text,
  second_factor_at timestamptz,
  factor_id uuid,
  factor_sealed text,
  factor_key_id text
)
language plpgsql
set search_path = ''
as $$
declare
  inherited app.sessions%rowtype;
  started app.sessions%rowtype;
begin
  delete from app.sessions s
  where s.user_id = owner
    and (s.revoked_at <= now() - interval '1 day' or s.expires_at <= now() - interval '1 day');
  -- The caller's session, which the statement calling this may have just ended (a password change ends them all).
  select * into inherited from app.sessions s where s.id = inherit_from and s.user_id = owner;
  insert into app.sessions (user_id, expires_at, user_agent, address, aal, second_factor, second_factor_at)
  values (
    owner,
    now() + make_interval(secs => least(idle_seconds, max_lifetime_seconds)),
    left(client_user_agent, 256),
    left(client_address, 100),
    case when verified_with is not null then 'aal2' else coalesce(inherited.aal, 'aal1') end,
    coalesce(verified_with, inherited.second_factor),
    case when verified_with is not null then now() else inherited.second_factor_at end
  )
  returning * into started;
  return query
    select started.id, started.generation, u.device_generation, l.*
    from app.users u cross join lateral app.session_level(started.id) l
    where u.id = owner;
end;
$$;
comment on function app.start_session(uuid, integer, integer, text, text, text, uuid) is
  'Starts a session for the user at aal1, at aal2 when verified_with names the second step, or at the level of inherit_from; prunes the user''s ended sessions; returns the session, the device generation and app.session_level.';
revoke all on function app.start_session(uuid, integer, integer, text, text, text, uuid) from public, anon, authenticated;

-- A refresh keeps the session's level and answers it, with the account's factor, for the new access token.
drop function app.refresh_session(uuid, integer, integer, integer, integer);
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
  token_version integer,
  session_aal text,
  session_started_at timestamptz,
  second_factor text,
  second_factor_at timestamptz,
  factor_id uuid,
  factor_sealed text,
  factor_key_id text
)
language plpgsql
set search_path = ''
as $$
declare
  current app.sessions%rowtype;
  refused text;
begin
  perform app.prune_sessions(2);
  -- Locked, so concurrent refreshes of one session run one after another and see each other's rotation.
  select * into current from app.sessions s where s.id = target_session for update;
  if not found or presented_generation > current.generation then
    refused := 'invalid';
  elsif current.revoked_at is not null then
    refused := 'revoked';
  elsif current.expires_at <= now() then
    refused := 'expired';
  elsif presented_generation = current.generation then
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
    refused := 'reused';
  end if;
  if refused is not null then
    return query select refused, null::uuid, null::integer, null::uuid, null, null, null, null, null,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer,
                        null, null::timestamptz, null, null::timestamptz, null::uuid, null, null;
    return;
  end if;
  -- Rotated just now, or the predecessor within its grace: both answer the current generation, so
  -- concurrent refreshes (two tabs, a retry) converge on one token.
  return query
    select 'refreshed', current.id, current.generation, u.id, u.name, u.phone_number, u.email, u.role,
           u.status, u.is_verified, u.created_at, u.updated_at, u.token_version, l.*
    from app.users u cross join lateral app.session_level(current.id) l
    where u.id = current.user_id;
end;
$$;
comment on function app.refresh_session(uuid, integer, integer, integer, integer) is
  'Rotates the session''s refresh token generation, accepts its predecessor within the grace, and revokes the session on any other reuse; answers the account and app.session_level.';
revoke all on function app.refresh_session(uuid, integer, integer, integer, integer) from public, anon, authenticated;

-- Wrong codes are counted per factor, whoever sends them: this many within the lockout lock the factor for it.
create function app.second_factor_failures_max() returns integer
language sql immutable
set search_path = ''
as $$ select 5 $$;
create function app.second_factor_lockout() returns interval
language sql immutable
set search_path = ''
as $$ select interval '15 minutes' $$;
revoke all on function app.second_factor_failures_max() from public, anon, authenticated;
revoke all on function app.second_factor_lockout() from public, anon, authenticated;

-- One attempt at the account's factor: `matched_step`, the time step whose code the functions found the given code
-- to be (null when it matched none), or `recovery_hash`, the keyed hash of a recovery code. While the factor is
-- locked every attempt is refused, right or wrong. A step at or before the last accepted one is a replay: refused,
-- but no guess, so not counted; an accepted step becomes the last one; a recovery code is used up. Runs with the
-- factor's row locked, so concurrent attempts with one code see each other: one is accepted.
-- Answers 'accepted', 'wrong', 'locked' (with the seconds left) or 'gone' (no such factor of the account).
create function app.attempt_second_factor(
  owner uuid,
  target_factor uuid,
  matched_step bigint,
  recovery_hash text,
  client_address text,
  client_user_agent text,
  out outcome text,
  out retry_after integer
)
language plpgsql
set search_path = ''
as $$
declare
  factor app.second_factors%rowtype;
  used_code boolean := false;
begin
  select * into factor from app.second_factors f
  where f.user_id = owner and (target_factor is null or f.id = target_factor)
  for update;
  if not found then
    outcome := 'gone';
    return;
  end if;
  if factor.locked_until > now() then
    outcome := 'locked';
    retry_after := ceil(extract(epoch from factor.locked_until - now()))::integer;
    return;
  end if;
  if recovery_hash is not null and factor.activated_at is not null then
    delete from app.recovery_codes r where r.user_id = owner and r.code_hash = recovery_hash;
    used_code := found;
  end if;
  if used_code or (matched_step is not null and (factor.last_step is null or matched_step > factor.last_step)) then
    update app.second_factors f
    set last_step = coalesce(matched_step, f.last_step), last_used_at = now(), failures = 0, failures_since = null
    where f.id = factor.id;
    if used_code then
      perform app.record_security_event('recovery_code_used', owner, owner, client_address, client_user_agent,
        jsonb_build_object('recoveryCodesLeft', (select count(*) from app.recovery_codes r where r.user_id = owner)));
      insert into app.mail_outbox (recipient, subject, body)
      select u.email, 'A recovery code was used',
             'A recovery code of your notes account was used to sign in. If this was not you, sign in, replace '
             || 'your recovery codes and change your password.'
      from app.users u where u.id = owner;
    end if;
    outcome := 'accepted';
    return;
  end if;
  -- A replayed code: genuine, of a step already accepted, so no guess. Refused, logged, and not counted, so a
  -- double submission (two tabs, a retry) cannot lock its owner out.
  if matched_step is not null then
    perform app.record_security_event('second_factor_failed', owner, owner, client_address, client_user_agent,
      jsonb_build_object('factorId', factor.id, 'reason', 'replayed'));
    outcome := 'wrong';
    return;
  end if;
  -- A wrong code. Failures older than the lockout no longer count.
  update app.second_factors f
  set failures = case when f.failures_since > now() - app.second_factor_lockout() then f.failures + 1 else 1 end,
      failures_since = case when f.failures_since > now() - app.second_factor_lockout() then f.failures_since
                            else now() end
  where f.id = factor.id
  returning * into factor;
  perform app.record_security_event('second_factor_failed', owner, owner, client_address, client_user_agent,
    jsonb_build_object('factorId', factor.id));
  if factor.failures >= app.second_factor_failures_max() then
    update app.second_factors f
    set locked_until = now() + app.second_factor_lockout(), failures = 0, failures_since = null
    where f.id = factor.id;
    perform app.record_security_event('second_factor_locked', owner, owner, client_address, client_user_agent,
      jsonb_build_object('factorId', factor.id));
  end if;
  outcome := 'wrong';
end;
$$;
comment on function app.attempt_second_factor(uuid, uuid, bigint, text, text, text) is
  'Checks one second-factor attempt under the factor''s row lock: replays refused, wrong codes counted per factor, 5 within 15 minutes lock it for 15 minutes.';
revoke all on function app.attempt_second_factor(uuid, uuid, bigint, text, text, text) from public, anon, authenticated;

-- What the statements of the second step answer: the attempt's outcome, and once accepted, the account and its new
-- aal2 session as a sign-in answers them.
create type app.second_step as (
  outcome text,
  retry_after integer,
  recovery_codes_left integer,
  session_id uuid,
  session_generation integer,
  device_generation integer,
  session_aal text,
  session_started_at timestamptz,
  second_factor text,
  second_factor_at timestamptz,
  factor_id uuid,
  factor_sealed text,
  factor_key_id text
);

-- Ends `ended_sessions` of the account (the caller's, or all of them) and starts its aal2 successor.
create function app.start_second_level_session(
  owner uuid,
  attempt_outcome text,
  verified_with text,
  ended_session uuid,
  ended_reason text,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns app.second_step
language plpgsql
set search_path = ''
as $$
declare
  result app.second_step;
begin
  update app.sessions s set revoked_at = now(), revoked_reason = ended_reason
  where s.user_id = owner and s.revoked_at is null and s.expires_at > now()
    and (ended_session is null or s.id = ended_session);
  select attempt_outcome, null, (select count(*)::integer from app.recovery_codes r where r.user_id = owner), s.*
  into result
  from app.start_session(owner, idle_seconds, max_lifetime_seconds, client_user_agent, client_address,
                         verified_with) s;
  return result;
end;
$$;
revoke all on function app.start_second_level_session(uuid, text, text, uuid, text, integer, integer, text, text)
  from public, anon, authenticated;

-- The second step of a sign-in (POST /auth/mfa/verify and /auth/mfa/recover): one attempt at the account's active
-- factor, and once accepted, the caller's aal1 session ends and an aal2 one starts in its place.
create function app.pass_second_step(
  owner uuid,
  caller_session uuid,
  target_factor uuid,
  matched_step bigint,
  recovery_hash text,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns app.second_step
language plpgsql
set search_path = ''
as $$
declare
  attempt record;
  result app.second_step;
begin
  if not exists (
    select from app.second_factors f where f.user_id = owner and f.id = target_factor and f.activated_at is not null
  ) then
    result.outcome := 'gone';
    return result;
  end if;
  select * into attempt from app.attempt_second_factor(owner, target_factor, matched_step, recovery_hash,
                                                       client_address, client_user_agent);
  if attempt.outcome <> 'accepted' then
    result.outcome := attempt.outcome;
    result.retry_after := attempt.retry_after;
    return result;
  end if;
  return app.start_second_level_session(
    owner, 'accepted', case when recovery_hash is null then 'totp' else 'recovery_code' end,
    caller_session, 'second_factor_verified', idle_seconds, max_lifetime_seconds, client_user_agent, client_address
  );
end;
$$;
comment on function app.pass_second_step(uuid, uuid, uuid, bigint, text, integer, integer, text, text) is
  'The second step of a sign-in: app.attempt_second_factor, then the caller''s aal1 session ends and an aal2 one starts.';
revoke all on function app.pass_second_step(uuid, uuid, uuid, bigint, text, integer, integer, text, text)
  from public, anon, authenticated;

-- Starts enrolment: the account's pending factor, replacing an earlier pending one. Null while the account has an
-- active factor (it must be removed first).
create function app.enroll_second_factor(owner uuid, sealed text, key_id text) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  enrolled uuid;
begin
  delete from app.second_factors f where f.user_id = owner and f.activated_at is null;
  insert into app.second_factors (user_id, secret_sealed, secret_key_id) values (owner, sealed, key_id)
  on conflict (user_id) do nothing
  returning id into enrolled;
  return enrolled;
end;
$$;
revoke all on function app.enroll_second_factor(uuid, text, text) from public, anon, authenticated;

-- Activates the pending factor with its first code: the account's recovery codes are replaced by `code_hashes`,
-- every session of the account ends, and the caller's successor starts at aal2.
create function app.activate_second_factor(
  owner uuid,
  target_factor uuid,
  matched_step bigint,
  code_hashes text[],
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns app.second_step
language plpgsql
set search_path = ''
as $$
declare
  attempt record;
  result app.second_step;
begin
  if not exists (
    select from app.second_factors f where f.user_id = owner and f.id = target_factor and f.activated_at is null
  ) then
    result.outcome := 'gone';
    return result;
  end if;
  select * into attempt from app.attempt_second_factor(owner, target_factor, matched_step, null,
                                                       client_address, client_user_agent);
  if attempt.outcome <> 'accepted' then
    result.outcome := attempt.outcome;
    result.retry_after := attempt.retry_after;
    return result;
  end if;
  update app.second_factors f set activated_at = now() where f.id = target_factor;
  delete from app.recovery_codes r where r.user_id = owner;
  insert into app.recovery_codes (user_id, code_hash) select owner, h from unnest(code_hashes) h;
  return app.start_second_level_session(
    owner, 'accepted', 'totp', null, 'second_factor_changed', idle_seconds, max_lifetime_seconds, client_user_agent,
    client_address
  );
end;
$$;
revoke all on function app.activate_second_factor(uuid, uuid, bigint, text[], integer, integer, text, text)
  from public, anon, authenticated;

-- Removes the account's active factor with a current code or a recovery code (POST /auth/mfa/unenroll): its
-- recovery codes go too, and every session but the caller's ends. Answers the attempt's outcome.
create function app.unenroll_second_factor(
  owner uuid,
  caller_session uuid,
  target_factor uuid,
  matched_step bigint,
  recovery_hash text,
  client_user_agent text,
  client_address text,
  out outcome text,
  out retry_after integer
)
language plpgsql
set search_path = ''
as $$
begin
  if not exists (
    select from app.second_factors f where f.user_id = owner and f.id = target_factor and f.activated_at is not null
  ) then
    outcome := 'gone';
    return;
  end if;
  select a.outcome, a.retry_after into outcome, retry_after
  from app.attempt_second_factor(owner, target_factor, matched_step, recovery_hash, client_address,
                                 client_user_agent) a;
  if outcome = 'accepted' then
    delete from app.second_factors f where f.id = target_factor;
    delete from app.recovery_codes r where r.user_id = owner;
    update app.sessions s set revoked_at = now(), revoked_reason = 'second_factor_changed'
    where s.user_id = owner and s.id <> caller_session and s.revoked_at is null and s.expires_at > now();
  end if;
end;
$$;
revoke all on function app.unenroll_second_factor(uuid, uuid, uuid, bigint, text, text, text)
  from public, anon, authenticated;

-- Replaces the account's recovery codes with `code_hashes`, given a current code or a recovery code
-- (POST /auth/mfa/recovery-codes); every session but the caller's ends. Answers the attempt's outcome.
create function app.replace_recovery_codes(
  owner uuid,
  caller_session uuid,
  matched_step bigint,
  recovery_hash text,
  code_hashes text[],
  client_user_agent text,
  client_address text,
  out outcome text,
  out retry_after integer
)
language plpgsql
set search_path = ''
as $$
begin
  if not exists (select from app.second_factors f where f.user_id = owner and f.activated_at is not null) then
    outcome := 'gone';
    return;
  end if;
  select a.outcome, a.retry_after into outcome, retry_after
  from app.attempt_second_factor(owner, null, matched_step, recovery_hash, client_address, client_user_agent) a;
  if outcome = 'accepted' then
    delete from app.recovery_codes r where r.user_id = owner;
    insert into app.recovery_codes (user_id, code_hash) select owner, h from unnest(code_hashes) h;
    update app.sessions s set revoked_at = now(), revoked_reason = 'second_factor_changed'
    where s.user_id = owner and s.id <> caller_session and s.revoked_at is null and s.expires_at > now();
    perform app.record_security_event('recovery_codes_replaced', owner, owner, client_address, client_user_agent,
      '{}'::jsonb);
    insert into app.mail_outbox (recipient, subject, body)
    select u.email, 'Your recovery codes were replaced',
           'New recovery codes were made for your notes account; the earlier ones no longer work. If this was not '
           || 'you, sign in and change your password.'
    from app.users u where u.id = owner;
  end if;
end;
$$;
revoke all on function app.replace_recovery_codes(uuid, uuid, bigint, text, text[], text, text)
  from public, anon, authenticated;

-- An operator's or admin's removal of a lost factor (POST /admin-users removeMfa, npm run admin -- remove-mfa): the
-- factor and its recovery codes go, and every session of the account ends. Answers whether there was one.
create function app.remove_second_factor(owner uuid) returns boolean
language plpgsql
set search_path = ''
as $$
begin
  delete from app.recovery_codes r where r.user_id = owner;
  delete from app.second_factors f where f.user_id = owner;
  if not found then
    return false;
  end if;
  update app.sessions s set revoked_at = now(), revoked_reason = 'second_factor_changed'
  where s.user_id = owner and s.revoked_at is null and s.expires_at > now();
  return true;
end;
$$;
revoke all on function app.remove_second_factor(uuid) from public, anon, authenticated;

-- A factor added to or removed from an account is on its security log and mailed to its owner, whichever
-- statement did it (an operator in SQL included); not when the account itself is being deleted.
create function app.audit_second_factor_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  owner app.users%rowtype;
begin
  if tg_op = 'UPDATE' and old.activated_at is null and new.activated_at is not null then
    select * into owner from app.users u where u.id = new.user_id;
    perform app.record_security_event('second_factor_added', new.user_id, app.audit_actor_or(new.user_id),
      app.audit_setting('address'), app.audit_setting('user_agent'), jsonb_build_object('factorId', new.id));
    insert into app.mail_outbox (recipient, subject, body)
    values (owner.email, 'A second factor was added to your account',
            'An authenticator app was added to your notes account: signing in now also asks for its code. If this '
            || 'was not you, reset your password and ask for the factor to be removed.');
  elsif tg_op = 'DELETE' and old.activated_at is not null then
    select * into owner from app.users u where u.id = old.user_id;
    if found then
      perform app.record_security_event('second_factor_removed', old.user_id, app.audit_actor_or(old.user_id),
        app.audit_setting('address'), app.audit_setting('user_agent'), jsonb_build_object('factorId', old.id));
      insert into app.mail_outbox (recipient, subject, body)
      values (owner.email, 'The second factor was removed from your account',
              'The authenticator app of your notes account was removed: signing in asks only for the password '
              || 'now. If this was not you, reset your password and add a second factor again.');
    end if;
  end if;
  return null;
end;
$$;
revoke all on function app.audit_second_factor_change() from public, anon, authenticated;

create trigger second_factors_audit
after update of activated_at or delete on app.second_factors
for each row execute function app.audit_second_factor_change();
