-- A code that proves the address gives the account back to the address's owner, and nothing a squatter or a thief
-- added survives it. Changing how one signs in needs a proof given for that change, never just a session's age.
--
-- 1. Recovery. A password set with a reset code (app.reset_password) now also calls app.reclaim_account: when the
--    address was unproven until this code, every second factor, its recovery codes and every provider identity go
--    (all of them were added by whoever held the account without the mailbox); when it was proven, the identities
--    that joined while it was not (app.identities.trusted) and those linked in the last RESET_REVOKES_RECENT_DAYS go
--    (an identity is a way in, as the password the reset replaces), but never the factor: a reset must not bypass the
--    second factor, so its session stays aal1 until the second step. A factor the reset finds locked is unlocked.
--    The owner is mailed what was removed. Enrolling a factor needs a verified address.
-- 2. Proofs for changes. POST /auth/reauthenticate records on the caller's session when its owner last proved it is
--    them (the password, a current code of the factor, or a recovery code): sessions.reauthenticated_at. Unlinking an
--    identity opens with app.require_reauthenticated_caller(); starting a link, and a password change or deletion of
--    an account without a password, need it in their own statements. app.caller_signed_in_freshly goes: the age of a
--    sign-in is no proof, a stolen token minutes old proves nothing.
-- 3. Recovery codes are kept once used (used_at), so a used code sent again is a replay: refused, never counted as
--    a guess. Wrong codes in a row are counted across lockouts: at 100 the factor stays locked until a password reset
--    (or an operator); the first lock of a day is mailed to the owner.
-- 4. Admins remove another account's factor only when that account is not an admin, and never their own
--    (app.admin_remove_second_factor); the operator's app.remove_second_factor is unchanged.
-- 5. Factor secrets sealed under JWT_SECRET (key id 'v1') are no longer put in access tokens: with JWT_SECRET and the
--    password, an aal1 token yielded the secret. New factors are sealed under MFA_SECRET_KEY (key id 'm1'), which the
--    token may carry; a 'v1' factor's secret is read from here when a code is checked.
-- 6. Every function granted to authenticated checks the caller is active: app.caller_reaches_notes() and
--    app.caller_verified_as_required() answer false for a revoked session, so the note count, the search and the
--    change position answer nothing for it.

-- 6. Predicates of the notes policies: a revoked caller reaches nothing.
create or replace function app.caller_verified_as_required() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select app.caller_is_active() and (
    not coalesce((select s.require_email_verification from app.settings s), false)
    or exists (select from app.users u where u.id = (select auth.uid()) and u.is_verified)
  )
$$;
comment on function app.caller_verified_as_required() is
  'False for a caller that is not active, and while app.settings requires verified addresses and the JWT caller''s address is not verified.';

create or replace function app.caller_reaches_notes() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select app.caller_is_active() and app.caller_verified_as_required() and app.caller_meets_second_factor()
$$;
comment on function app.caller_reaches_notes() is
  'app.caller_is_active(), app.caller_verified_as_required() and app.caller_meets_second_factor(): what the notes policies require.';

-- 2. Proofs given for a change, recorded on the session that gave them.
alter table app.sessions
  add column reauthenticated_at timestamptz,
  add column reauthenticated_with text check (reauthenticated_with in ('password', 'totp', 'recovery_code', 'provider')),
  add constraint sessions_reauthenticated_with_when check ((reauthenticated_at is null) = (reauthenticated_with is null));
comment on column app.sessions.reauthenticated_at is
  'When the session''s owner last proved it is them for a change of how the account signs in (POST /auth/reauthenticate); good for app.reauthentication_window().';

alter table app.security_events drop constraint security_events_type_check;
alter table app.security_events add constraint security_events_type_check check (type in (
  'registered', 'login_succeeded', 'login_failed', 'login_refused_by_limit', 'password_reset_requested',
  'password_set_with_code', 'password_changed', 'email_verified', 'session_started', 'session_ended',
  'refresh_token_reused', 'account_suspended', 'account_reactivated', 'role_granted', 'role_revoked',
  'account_deleted', 'second_factor_added', 'second_factor_removed', 'second_factor_failed', 'second_factor_locked',
  'recovery_code_used', 'recovery_codes_replaced', 'identity_linked', 'identity_unlinked', 'reauthenticated'
));

create function app.reauthentication_window() returns interval
language sql immutable
set search_path = ''
as $$ select interval '5 minutes' $$;
revoke all on function app.reauthentication_window() from public, anon, authenticated;

-- Whether the JWT caller's own session gave a proof within app.reauthentication_window().
create function app.caller_reauthenticated() returns boolean
language sql stable
set search_path = ''
as $$
  select exists (
    select from app.sessions s
    where s.id = (select app.claimed_session_id()) and s.user_id = (select auth.uid())
      and s.revoked_at is null and s.expires_at > now()
      and s.reauthenticated_at > now() - app.reauthentication_window()
  )
$$;
comment on function app.caller_reauthenticated() is
  'Whether the JWT caller''s session proved its owner (POST /auth/reauthenticate) within app.reauthentication_window().';
revoke all on function app.caller_reauthenticated() from public, anon, authenticated;

-- The opening statement of the changes that need a proof given for them: PT401, PTMFA as app.require_full_caller,
-- then PTRAU without a recent proof.
create function app.require_reauthenticated_caller() returns void
language plpgsql stable
set search_path = ''
as $$
begin
  perform app.require_full_caller();
  if not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
end;
$$;
comment on function app.require_reauthenticated_caller() is
  'Raises as app.require_full_caller(), then PTRAU unless app.caller_reauthenticated().';
revoke all on function app.require_reauthenticated_caller() from public, anon, authenticated;

-- Records a proof on the owner's live session: `method` says which; for 'password', `expected_hash` must still be
-- the account's hash (it was checked against it by the function). Answers until when the proof counts, or null.
create function app.record_reauthentication(
  owner uuid,
  caller_session uuid,
  method text,
  expected_hash text,
  client_address text,
  client_user_agent text
) returns timestamptz
language plpgsql
set search_path = ''
as $$
declare
  proven timestamptz;
begin
  update app.sessions s set reauthenticated_at = now(), reauthenticated_with = method
  where s.id = caller_session and s.user_id = owner and s.revoked_at is null and s.expires_at > now()
    and (method <> 'password'
         or exists (select from app.users u where u.id = owner and u.password_hash = expected_hash))
  returning s.reauthenticated_at into proven;
  if proven is null then
    return null;
  end if;
  perform app.record_security_event('reauthenticated', owner, owner, client_address, client_user_agent,
    jsonb_build_object('sessionId', caller_session, 'method', method));
  return proven + app.reauthentication_window();
end;
$$;
revoke all on function app.record_reauthentication(uuid, uuid, text, text, text, text) from public, anon, authenticated;

-- 3. Recovery codes kept once used, and wrong codes counted in a row.
alter table app.recovery_codes add column used_at timestamptz;
comment on table app.recovery_codes is
  'An account''s recovery codes, as keyed hashes; a used one keeps its row (used_at), so sending it again is a replay, not a guess.';

alter table app.second_factors
  add column consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  add column lock_mailed_at timestamptz;
comment on column app.second_factors.consecutive_failures is
  'Wrong codes since the last accepted one, across lockouts: at app.second_factor_failures_for_good() the factor stays locked until a password reset or an operator.';

create function app.second_factor_failures_for_good() returns integer
language sql immutable
set search_path = ''
as $$ select 100 $$;
revoke all on function app.second_factor_failures_for_good() from public, anon, authenticated;

-- As before, with: a used recovery code sent again refused as a replay and not counted; wrong codes in a row counted
-- across lockouts, up to a lock that only a reset lifts ('locked_out'); the owner mailed at the first lock of a day.
create or replace function app.attempt_second_factor(
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
  replayed boolean := false;
begin
  select * into factor from app.second_factors f
  where f.user_id = owner and (target_factor is null or f.id = target_factor)
  for update;
  if not found then
    outcome := 'gone';
    return;
  end if;
  if factor.locked_until = 'infinity' then
    outcome := 'locked_out';
    return;
  end if;
  if factor.locked_until > now() then
    outcome := 'locked';
    retry_after := ceil(extract(epoch from factor.locked_until - now()))::integer;
    return;
  end if;
  if recovery_hash is not null and factor.activated_at is not null then
    update app.recovery_codes r set used_at = now()
    where r.user_id = owner and r.code_hash = recovery_hash and r.used_at is null;
    used_code := found;
    replayed := not used_code and exists (
      select from app.recovery_codes r where r.user_id = owner and r.code_hash = recovery_hash
    );
  end if;
  if used_code or (matched_step is not null and (factor.last_step is null or matched_step > factor.last_step)) then
    update app.second_factors f
    set last_step = coalesce(matched_step, f.last_step), last_used_at = now(), failures = 0, failures_since = null,
        consecutive_failures = 0
    where f.id = factor.id;
    if used_code then
      perform app.record_security_event('recovery_code_used', owner, owner, client_address, client_user_agent,
        jsonb_build_object('recoveryCodesLeft',
          (select count(*) from app.recovery_codes r where r.user_id = owner and r.used_at is null)));
      insert into app.mail_outbox (recipient, subject, body)
      select u.email, 'A recovery code was used',
             'A recovery code of your notes account was used to sign in. If this was not you, sign in, replace '
             || 'your recovery codes and change your password.'
      from app.users u where u.id = owner;
    end if;
    outcome := 'accepted';
    return;
  end if;
  -- A replayed code (a TOTP code of a step already accepted, or a recovery code already used): genuine, so no
  -- guess. Refused, logged, and not counted, so a double submission cannot lock its owner out.
  if matched_step is not null or replayed then
    perform app.record_security_event('second_factor_failed', owner, owner, client_address, client_user_agent,
      jsonb_build_object('factorId', factor.id, 'reason', 'replayed'));
    outcome := 'wrong';
    return;
  end if;
  -- A wrong code. Failures older than the lockout no longer count towards it; those in a row always do.
  update app.second_factors f
  set failures = case when f.failures_since > now() - app.second_factor_lockout() then f.failures + 1 else 1 end,
      failures_since = case when f.failures_since > now() - app.second_factor_lockout() then f.failures_since
                            else now() end,
      consecutive_failures = f.consecutive_failures + 1
  where f.id = factor.id
  returning * into factor;
  perform app.record_security_event('second_factor_failed', owner, owner, client_address, client_user_agent,
    jsonb_build_object('factorId', factor.id));
  if factor.failures >= app.second_factor_failures_max()
     or factor.consecutive_failures >= app.second_factor_failures_for_good() then
    update app.second_factors f
    set locked_until = case when f.consecutive_failures >= app.second_factor_failures_for_good() then 'infinity'
                            else now() + app.second_factor_lockout() end,
        failures = 0, failures_since = null,
        lock_mailed_at = case when f.lock_mailed_at > now() - interval '1 day' then f.lock_mailed_at else now() end
    where f.id = factor.id
    returning * into factor;
    perform app.record_security_event('second_factor_locked', owner, owner, client_address, client_user_agent,
      jsonb_build_object('factorId', factor.id, 'untilReset', factor.locked_until = 'infinity'));
    -- Whoever sends these codes has the password: the owner hears of it at the first lock of a day, and at the last.
    if factor.lock_mailed_at = now() or factor.locked_until = 'infinity' then
      insert into app.mail_outbox (recipient, subject, body)
      select u.email, 'Someone knows your password',
             'Wrong codes of your authenticator app were sent after your notes account''s password was entered, '
             || 'and the second factor is locked'
             || case when factor.locked_until = 'infinity' then ' until the password is reset' else ' for a while' end
             || '. If this was not you, someone knows your password: reset it now with "Forgot password".'
      from app.users u where u.id = owner;
    end if;
  end if;
  outcome := 'wrong';
end;
$$;
comment on function app.attempt_second_factor(uuid, uuid, bigint, text, text, text) is
  'Checks one second-factor attempt under the factor''s row lock: replays (TOTP steps and used recovery codes) refused uncounted, wrong codes counted per factor (5 within 15 minutes lock it for 15 minutes, 100 in a row until a reset).';

-- Recovery codes left: the unused ones.
create or replace function app.start_second_level_session(
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
  select attempt_outcome, null,
         (select count(*)::integer from app.recovery_codes r where r.user_id = owner and r.used_at is null), s.*
  into result
  from app.start_session(owner, idle_seconds, max_lifetime_seconds, client_user_agent, client_address,
                         verified_with, ended_session) s;
  return result;
end;
$$;

-- A proof with the account's factor for POST /auth/reauthenticate: one attempt (counted as any), then recorded.
create function app.reauthenticate_with_factor(
  owner uuid,
  caller_session uuid,
  target_factor uuid,
  matched_step bigint,
  recovery_hash text,
  client_address text,
  client_user_agent text,
  out outcome text,
  out retry_after integer,
  out valid_until timestamptz
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
    valid_until := app.record_reauthentication(owner, caller_session,
      case when recovery_hash is null then 'totp' else 'recovery_code' end, null, client_address, client_user_agent);
  end if;
end;
$$;
revoke all on function app.reauthenticate_with_factor(uuid, uuid, uuid, bigint, text, text, text)
  from public, anon, authenticated;

-- 1. Enrolling needs a verified address: a factor added while the address is unproven is what let a pre-registrant
-- keep the account after its owner's reset. PT403, as for the notes of an unverified caller.
create or replace function app.enroll_second_factor(owner uuid, sealed text, key_id text) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  enrolled uuid;
begin
  if not exists (select from app.users u where u.id = owner and u.is_verified) then
    raise sqlstate 'PT403' using message = 'email address not verified';
  end if;
  delete from app.second_factors f where f.user_id = owner and f.activated_at is null;
  insert into app.second_factors (user_id, secret_sealed, secret_key_id) values (owner, sealed, key_id)
  on conflict (user_id) do nothing
  returning id into enrolled;
  return enrolled;
end;
$$;

-- 5. What a token carries of the factor: its id always; its sealed secret only under MFA_SECRET_KEY.
create or replace function app.session_level(target_session uuid) returns table (
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
  select s.aal, s.created_at, s.second_factor, s.second_factor_at, f.id,
         case when f.secret_key_id <> 'v1' then f.secret_sealed end,
         case when f.secret_key_id <> 'v1' then f.secret_key_id end
  from app.sessions s
  left join app.second_factors f on f.user_id = s.user_id and f.activated_at is not null
  where s.id = target_session
$$;

-- The sealed secret of the account's active factor, for a code checked against a factor whose token carries none.
create function app.sealed_factor_secret(owner uuid, target_factor uuid)
returns table (sealed text, key_id text)
language sql stable
set search_path = ''
as $$
  select f.secret_sealed, f.secret_key_id from app.second_factors f
  where f.user_id = owner and f.id = target_factor and f.activated_at is not null
$$;
revoke all on function app.sealed_factor_secret(uuid, uuid) from public, anon, authenticated;

-- 4. An admin's removal: never the admin's own factor (unenroll with a code does that), never another admin's.
-- Answers 'removed', 'no_factor', 'own_account', 'admin_account' or 'unknown_user'.
create function app.admin_remove_second_factor(target uuid) returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
begin
  select * into account from app.users u where u.id = target;
  if not found then
    return 'unknown_user';
  end if;
  if account.id = (select auth.uid()) then
    return 'own_account';
  end if;
  if account.role = 'ADMIN' then
    return 'admin_account';
  end if;
  return case when app.remove_second_factor(target) then 'removed' else 'no_factor' end;
end;
$$;
comment on function app.admin_remove_second_factor(uuid) is
  'An admin''s removal of another account''s lost factor (the JWT caller is the admin): refused for the admin''s own account and for admins.';
revoke all on function app.admin_remove_second_factor(uuid) from public, anon, authenticated;

-- The factor's own mails are left out while an account is reclaimed: app.reclaim_account sends one that says all.
create or replace function app.audit_second_factor_change() returns trigger
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
        app.audit_setting('address'), app.audit_setting('user_agent'),
        jsonb_build_object('factorId', old.id) || case when app.audit_setting('cause') = 'account_reclaimed'
          then jsonb_build_object('reason', 'account_reclaimed') else '{}'::jsonb end);
      if app.audit_setting('cause') is distinct from 'account_reclaimed' then
        insert into app.mail_outbox (recipient, subject, body)
        values (owner.email, 'The second factor was removed from your account',
                'The authenticator app of your notes account was removed: signing in asks only for the password '
                || 'now. If this was not you, reset your password and add a second factor again.');
      end if;
    end if;
  end if;
  return null;
end;
$$;

-- 1. What a code that proves the address takes back. `address_was_proven`: whether the address was verified before
-- this code proved it. Runs after the new password is set (which ended every session and device token). Mails the
-- owner, and answers, what it removed.
create function app.reclaim_account(
  owner uuid,
  address_was_proven boolean,
  recent_days integer,
  client_address text,
  client_user_agent text
) returns text[]
language plpgsql
set search_path = ''
as $$
declare
  removed text[] := '{}';
  dropped app.identities%rowtype;
  factor_removed boolean;
begin
  perform set_config('app.audit_cause', 'account_reclaimed', true);
  if not address_was_proven then
    delete from app.recovery_codes r where r.user_id = owner;
    delete from app.second_factors f where f.user_id = owner;
    factor_removed := found;
    if factor_removed then
      removed := array_append(removed, 'the authenticator app (second factor) added before the address was proven');
    end if;
  else
    -- A reset is no way around the owner's own factor, but it ends a lock whoever caused it.
    update app.second_factors f set locked_until = null, failures = 0, failures_since = null, consecutive_failures = 0
    where f.user_id = owner and f.locked_until is not null;
  end if;
  for dropped in
    delete from app.identities i
    using app.users u
    where i.user_id = owner and u.id = owner
      and (not address_was_proven or not i.trusted
           -- Linked lately: not the identity the account was made with (inserted with it, at its created_at).
           or (i.created_at > now() - make_interval(days => recent_days) and i.created_at <> u.created_at))
    returning i.*
  loop
    perform app.record_security_event('identity_unlinked', owner, null, client_address, client_user_agent,
      jsonb_build_object('provider', dropped.provider, 'identityId', dropped.id, 'reason', 'account_reclaimed'));
    removed := array_append(removed, format('the sign-in with %s (%s) linked on %s', dropped.provider,
      coalesce(dropped.email, 'no address'), to_char(dropped.created_at at time zone 'UTC', 'YYYY-MM-DD')));
  end loop;
  insert into app.mail_outbox (recipient, subject, body)
  select u.email, 'Your password was reset',
         'The password of your notes account was set with a code sent to this address, and every device was '
         || 'signed out.'
         || case when cardinality(removed) = 0 then ''
                 else ' To give the account back to you, these ways in were removed: ' || array_to_string(removed, '; ')
                      || '.' end
         || ' If this was not you, reset your password now with "Forgot password".'
  from app.users u where u.id = owner;
  return removed;
end;
$$;
comment on function app.reclaim_account(uuid, boolean, integer, text, text) is
  'After a code proved the address: removes what was added while it was unproven (factors, identities) and the identities linked in the last recent_days, unlocks the factor, and mails the owner.';
revoke all on function app.reclaim_account(uuid, boolean, integer, text, text) from public, anon, authenticated;

-- app.reclaim_account does what this trigger did, and more.
drop trigger security_events_reset_drops_unproven_identities on app.security_events;
drop function app.drop_unproven_identities();

-- A password changed with the current one (or by a provider-only account) is mailed: if it was not the owner, a reset
-- takes the account back.
create function app.mail_password_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.mail_outbox (recipient, subject, body)
  select u.email, 'Your password was changed',
         'The password of your notes account was changed. If this was not you, reset it now with "Forgot password": '
         || 'a reset signs every device out.'
  from app.users u where u.id = new.user_id;
  return null;
end;
$$;
revoke all on function app.mail_password_change() from public, anon, authenticated;
create trigger security_events_mail_password_change
after insert on app.security_events
for each row when (new.type = 'password_changed')
execute function app.mail_password_change();

-- app.reset_password with the reclaim: `recent_identity_days` is RESET_REVOKES_RECENT_DAYS.
drop function app.reset_password(text, text, text, integer, integer);
create function app.reset_password(
  target_email text,
  presented_hash text,
  new_password_hash text,
  max_wrong_codes integer,
  wrong_codes_window_seconds integer,
  recent_identity_days integer,
  client_address text,
  client_user_agent text
) returns table (
  outcome text,
  retry_after integer,
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
  target app.users%rowtype;
  code_matches boolean;
  wait integer;
begin
  select * into target from app.users u where u.email = target_email for update;
  if not found then
    return query select 'unknown-user', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  -- Wrong codes count per account across every address and every code (docs/security.md).
  wait := app.rate_limit_wait('reset-code-account', target.id::text, max_wrong_codes);
  if wait > 0 then
    return query select 'throttled', wait, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  select c.code_hash = presented_hash into code_matches
  from app.password_reset_codes c
  where c.user_id = target.id and c.expires_at > now() and c.attempts_left > 0
  for update;

  if code_matches then
    delete from app.password_reset_codes c where c.user_id = target.id;
  elsif code_matches is not null then
    update app.password_reset_codes c set attempts_left = c.attempts_left - 1 where c.user_id = target.id;
  end if;

  if not coalesce(code_matches, false) then
    perform app.count_rate_limit_hit('reset-code-account', target.id::text, wrong_codes_window_seconds);
    return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  if target.status = 'SUSPENDED' then
    return query select 'suspended', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  delete from app.rate_limits r where r.bucket = 'login-failure' and r.email = target_email;
  delete from app.email_verification_codes c where c.user_id = target.id;
  -- The new hash raises token_version and the device generation, which ends every session and voids every device
  -- token; then what was added without the mailbox goes.
  update app.users u set password_hash = new_password_hash, is_verified = true where u.id = target.id;
  perform app.reclaim_account(target.id, target.is_verified, recent_identity_days, client_address, client_user_agent);
  return query
    select 'updated', null::integer, u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
           u.created_at, u.updated_at, u.token_version
    from app.users u where u.id = target.id;
end;
$$;
comment on function app.reset_password(text, text, text, integer, integer, integer, text, text) is
  'Sets a new password hash with a reset code (its HMAC) and reclaims the account for the address''s owner (app.reclaim_account); a wrong code uses up an attempt and counts against the account.';
revoke all on function app.reset_password(text, text, text, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- 2. The rules that took a fresh sign-in as a proof now take a recorded one.
create or replace function app.change_password(owner uuid, expected_hash text, new_hash text)
returns table (
  outcome text,
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
begin
  return query
    update app.users u set password_hash = new_hash
    where u.id = owner
      and (u.password_hash = expected_hash or (expected_hash is null and app.caller_reauthenticated()))
    returning 'changed', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
  if not found then
    return query select 'stale', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
  end if;
end;
$$;

create or replace function app.delete_account(owner uuid, expected_hash text) returns boolean
language sql
set search_path = ''
as $$
  with deleted as (
    delete from app.users u
    where u.id = owner
      and (u.password_hash = expected_hash or (expected_hash is null and app.caller_reauthenticated()))
    returning 1
  )
  select exists (select from deleted)
$$;

-- A provider sign-in started for a proof (POST /auth/reauthenticate/provider): the flow of an account's session,
-- which the callback concludes by recording the proof on that session, never by signing in or linking.
alter table app.oauth_flows
  add column reauthenticate boolean not null default false,
  add constraint oauth_flows_reauthenticate_for_a_session check (not reauthenticate or link_session_id is not null);
comment on column app.oauth_flows.reauthenticate is
  'A sign-in at a provider the account has linked, asked with prompt=login and max_age=0, for a proof recorded on link_session_id.';

drop function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text);
create function app.start_oauth_flow(
  state_hash text,
  flow_provider text,
  code_verifier text,
  nonce text,
  redirect_to text,
  client_address text,
  window_seconds integer,
  max_attempts integer,
  link_user uuid default null,
  link_session uuid default null,
  link_password_hash text default null,
  app_code_challenge text default null,
  browser_hash text default null,
  reauthenticate boolean default false
) returns table (retry_after integer, link_allowed boolean)
language plpgsql
set search_path = ''
as $$
declare
  wait integer := 0;
begin
  -- A link needs a proof; a flow that is itself a proof needs only the session's account to have an identity there.
  if link_user is not null and not reauthenticate and not (
    app.caller_reauthenticated()
    or exists (select from app.users u where u.id = link_user and u.password_hash = link_password_hash)
  ) then
    return query select 0, false;
    return;
  end if;
  if reauthenticate and not exists (
    select from app.identities i where i.user_id = link_user and i.provider = flow_provider
  ) then
    return query select 0, false;
    return;
  end if;
  wait := app.take_rate_limit('oauth-address', client_address, window_seconds, max_attempts);
  if wait > 0 then
    return query select wait, link_user is not null;
    return;
  end if;
  delete from app.oauth_flows f where f.ctid in (
    select f2.ctid from app.oauth_flows f2 where f2.expires_at <= now() limit 100
  );
  delete from app.oauth_codes c where c.ctid in (
    select c2.ctid from app.oauth_codes c2 where c2.expires_at <= now() limit 100
  );
  delete from app.identity_link_codes c where c.ctid in (
    select c2.ctid from app.identity_link_codes c2 where c2.expires_at <= now() limit 100
  );
  insert into app.oauth_flows (state_hash, provider, code_verifier, nonce, redirect_to, link_user_id,
                               link_session_id, app_code_challenge, browser_hash, reauthenticate, expires_at)
  values (start_oauth_flow.state_hash, flow_provider, start_oauth_flow.code_verifier, start_oauth_flow.nonce,
          start_oauth_flow.redirect_to, link_user, link_session, start_oauth_flow.app_code_challenge,
          start_oauth_flow.browser_hash, start_oauth_flow.reauthenticate, now() + interval '10 minutes');
  return query select 0, link_user is not null;
end;
$$;
comment on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text, boolean) is
  'Stores a provider sign-in (bound to its browser, with the app''s PKCE challenge), a link (the caller re-entered the password, or gave a proof within app.reauthentication_window()) or a proof at a linked provider, rate-limited per address, for 10 minutes.';
revoke all on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text, boolean)
  from public, anon, authenticated;

-- A link's browser step binds a proof's flow too, and says it is one: its authorization URL asks for a new sign-in.
drop function app.bind_link_flow(text, text);
create function app.bind_link_flow(flow_state_hash text, flow_browser_hash text)
returns table (provider text, code_verifier text, nonce text, reauthenticate boolean)
language sql
set search_path = ''
as $$
  update app.oauth_flows f set browser_hash = flow_browser_hash
  where f.state_hash = flow_state_hash and f.link_user_id is not null and f.browser_hash is null
    and f.expires_at > now()
  returning f.provider, f.code_verifier, f.nonce, f.reauthenticate
$$;
comment on function app.bind_link_flow(text, text) is
  'Binds a link''s (or a proof''s) flow to the browser that opens it first (its cookie''s HMAC), once.';
revoke all on function app.bind_link_flow(text, text) from public, anon, authenticated;

-- The callback learns whether a flow is a proof.
drop function app.consume_oauth_flow(text, text, text);
create function app.consume_oauth_flow(flow_state_hash text, flow_browser_hash text, callback_provider text)
returns table (
  provider text,
  code_verifier text,
  nonce text,
  redirect_to text,
  link_user_id uuid,
  link_session_id uuid,
  app_code_challenge text,
  reauthenticate boolean,
  expired boolean
)
language sql
set search_path = ''
as $$
  with spent as (
    delete from app.oauth_flows f where f.state_hash = flow_state_hash returning f.*
  )
  select s.provider, s.code_verifier, s.nonce, s.redirect_to, s.link_user_id, s.link_session_id,
         s.app_code_challenge, s.reauthenticate, s.expires_at <= now()
  from spent s
  where s.browser_hash = flow_browser_hash and s.provider = callback_provider
$$;
comment on function app.consume_oauth_flow(text, text, text) is
  'Spends a provider flow; answers it only at its provider''s callback, in the browser it is bound to.';
revoke all on function app.consume_oauth_flow(text, text, text) from public, anon, authenticated;

-- Concludes a proof at a provider: the identity that signed in must be one of the account's, and the session that
-- asked still live. Answers 'reauthenticated', 'identity_not_linked' (another identity signed in) or 'link_expired'.
create function app.complete_provider_reauthentication(
  owner uuid,
  caller_session uuid,
  flow_issuer text,
  flow_subject text,
  client_address text,
  client_user_agent text
) returns text
language plpgsql
set search_path = ''
as $$
begin
  if not exists (
    select from app.identities i where i.user_id = owner and i.issuer = flow_issuer and i.subject = flow_subject
  ) then
    return 'identity_not_linked';
  end if;
  if app.record_reauthentication(owner, caller_session, 'provider', null, client_address, client_user_agent) is null then
    return 'link_expired';
  end if;
  update app.identities i set last_sign_in_at = now()
  where i.user_id = owner and i.issuer = flow_issuer and i.subject = flow_subject;
  return 'reauthenticated';
end;
$$;
revoke all on function app.complete_provider_reauthentication(uuid, uuid, text, text, text, text)
  from public, anon, authenticated;

drop function app.caller_signed_in_freshly(boolean);
drop function app.fresh_sign_in();

-- Unlinking is mailed, as linking is; the function opens behind app.require_reauthenticated_caller() and checks
-- the proof itself too.
create or replace function app.unlink_identity(owner uuid, target_identity uuid, client_address text, client_user_agent text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  removed app.identities%rowtype;
begin
  if not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
  select * into account from app.users u where u.id = owner for update;
  if not exists (select from app.identities i where i.id = target_identity and i.user_id = owner) then
    return 'not_found';
  end if;
  if account.password_hash is null
     and not exists (select from app.identities i where i.user_id = owner and i.id <> target_identity) then
    return 'last_sign_in_method';
  end if;
  delete from app.identities i where i.id = target_identity and i.user_id = owner returning * into removed;
  perform app.record_security_event('identity_unlinked', owner, owner, client_address, client_user_agent,
    jsonb_build_object('provider', removed.provider, 'identityId', removed.id));
  insert into app.mail_outbox (recipient, subject, body)
  values (account.email, 'A sign-in was removed from your account',
          format('Signing in with %s (%s) was removed from your notes account. If this was not you, reset your '
                 || 'password now with "Forgot password": a reset signs every device out.',
                 removed.provider, coalesce(removed.email, 'no address')));
  return 'unlinked';
end;
$$;
