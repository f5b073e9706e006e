-- Passkeys (WebAuthn credentials): a first factor that is also a second (a user-verifying authenticator proves what
-- one has and who one is), a second step after a password, and a proof for a change of how one signs in.
--
-- The functions run the ceremonies with @simplewebauthn/server; Postgres holds what makes them safe:
-- 1. Challenges are single use and expire after 5 minutes: each is a row that the statement verifying it deletes, so
--    of many verifications racing on one challenge, one finds it. A challenge is bound to what asked for it: a
--    usernameless sign-in (no account), or one session of one account (registering, the second step, a proof).
-- 2. Credentials and challenges live in the private schema with row-level security and no policy: a token's claims
--    reach neither, whatever role they name.
-- 3. Registering needs a proof given for it (app.caller_reauthenticated(), as linking does): a stolen token must not
--    plant its thief's passkey. At most app.passkeys_max() per account. Added and removed passkeys are mailed and on
--    the security log.
-- 4. A device-bound credential's signature counter must move forward: a counter that goes back (a cloned key) is
--    refused and recorded. A synced passkey counts nothing (always 0) and is accepted.
-- 5. A passkey sign-in is aal2 (amr passkey): sessions.second_factor 'passkey_sign_in'; as the second step after a
--    password, 'passkey'. A passkey is a way in: the last one of an account without a password or identity stays,
--    and an identity is no longer the last way in while a passkey is there. A reset drops the passkeys added while
--    the address was unproven (app.reclaim_account).

create table app.passkeys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  -- The credential id as the browser gives it (base64url), unique across accounts.
  credential_id text not null unique
    check (credential_id ~ '^[A-Za-z0-9_-]+$' and char_length(credential_id) between 16 and 1400),
  -- The COSE public key, as the authenticator registered it (an ML-DSA key is over a kilobyte).
  public_key bytea not null check (octet_length(public_key) between 16 and 4096),
  sign_count bigint not null default 0 check (sign_count >= 0),
  transports text[] not null default '{}' check (cardinality(transports) <= 8),
  -- singleDevice (device-bound) or multiDevice (synced); backed_up: synced now.
  device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
  backed_up boolean not null,
  aaguid uuid not null,
  name text not null check (char_length(name) between 1 and 100),
  -- Whether the account's address was proven when the passkey was added: a reset code drops those without it.
  trusted boolean not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
comment on table app.passkeys is
  'WebAuthn credentials (passkeys), each of one account; ways to sign in, a second step, and proofs for changes.';
comment on column app.passkeys.sign_count is
  'The highest signature counter accepted; a device-bound credential must present a higher one each time (0 and 0 for a synced passkey).';
create index passkeys_user_id_idx on app.passkeys (user_id);
alter table app.passkeys enable row level security;
revoke all on table app.passkeys from public, anon, authenticated;

create table app.passkey_challenges (
  -- SHA-256 of the challenge (hex) as it travels base64url-encoded in clientDataJSON.
  challenge_hash text primary key check (challenge_hash ~ '^[0-9a-f]{64}$'),
  -- register: the session registering; sign_in: a usernameless sign-in; session: the second step or a proof of the
  -- session's owner, with one of the account's passkeys.
  purpose text not null check (purpose in ('register', 'sign_in', 'session')),
  user_id uuid references app.users (id) on delete cascade,
  session_id uuid,
  expires_at timestamptz not null,
  check ((purpose = 'sign_in') = (user_id is null) and (user_id is null) = (session_id is null))
);
comment on table app.passkey_challenges is
  'WebAuthn challenges under way: each is deleted by the one verification that uses it, or pruned once expired.';
create index passkey_challenges_expires_at_idx on app.passkey_challenges (expires_at);
alter table app.passkey_challenges enable row level security;
revoke all on table app.passkey_challenges from public, anon, authenticated;

create function app.passkeys_max() returns integer
language sql immutable
set search_path = ''
as $$ select 10 $$;
revoke all on function app.passkeys_max() from public, anon, authenticated;

create function app.passkey_challenge_lifetime() returns interval
language sql immutable
set search_path = ''
as $$ select interval '5 minutes' $$;
revoke all on function app.passkey_challenge_lifetime() from public, anon, authenticated;

-- Sessions made with a passkey.
alter table app.sessions drop constraint sessions_second_factor_check;
alter table app.sessions add constraint sessions_second_factor_check
  check (second_factor in ('totp', 'recovery_code', 'passkey', 'passkey_sign_in'));
alter table app.sessions drop constraint sessions_signed_in_with_check;
alter table app.sessions add constraint sessions_signed_in_with_check
  check (signed_in_with in ('password', 'provider', 'passkey'));
alter table app.sessions drop constraint sessions_reauthenticated_with_check;
alter table app.sessions add constraint sessions_reauthenticated_with_check
  check (reauthenticated_with in ('password', 'totp', 'recovery_code', 'provider', 'passkey'));

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'login-account', 'login-device', 'signup-address', 'reset-address',
  'reset-code-account', 'reset-request-address', 'refresh-address', 'verify-address', 'reentry-session',
  'oauth-address', 'passkey-address'
));

alter table app.security_events drop constraint security_events_type_check;
alter table app.security_events add constraint security_events_type_check check (type in (
  'registered', 'login_succeeded', 'login_failed', 'login_refused_by_limit', 'password_reset_requested',
  'password_set_with_code', 'password_changed', 'email_verified', 'session_started', 'session_ended',
  'refresh_token_reused', 'account_suspended', 'account_reactivated', 'role_granted', 'role_revoked',
  'account_deleted', 'second_factor_added', 'second_factor_removed', 'second_factor_failed', 'second_factor_locked',
  'recovery_code_used', 'recovery_codes_replaced', 'identity_linked', 'identity_unlinked', 'reauthenticated',
  'passkey_added', 'passkey_removed', 'passkey_renamed', 'passkey_counter_regressed'
));

-- 1. A challenge for a ceremony, rate-limited per address (`retry_after` > 0: nothing stored). For 'register' the
-- caller must have given a proof lately and have room for one more; answers the account's credential ids (to exclude
-- from a registration, or to allow in a session's ceremony). `outcome`: 'started', 'throttled', 'limit_reached'.
create function app.start_passkey_challenge(
  challenge_purpose text,
  challenge text,
  owner uuid,
  owner_session uuid,
  client_address text,
  window_seconds integer,
  max_per_address integer,
  out outcome text,
  out retry_after integer,
  out credential_ids text[]
)
language plpgsql
set search_path = ''
as $$
begin
  if challenge_purpose = 'register' and not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
  if owner is not null then
    select coalesce(array_agg(p.credential_id order by p.created_at), '{}') into credential_ids
    from app.passkeys p where p.user_id = owner;
  end if;
  if challenge_purpose = 'register' and cardinality(credential_ids) >= app.passkeys_max() then
    outcome := 'limit_reached';
    return;
  end if;
  retry_after := app.take_rate_limit('passkey-address', client_address, window_seconds, max_per_address);
  if retry_after > 0 then
    outcome := 'throttled';
    return;
  end if;
  delete from app.passkey_challenges c where c.ctid in (
    select c2.ctid from app.passkey_challenges c2 where c2.expires_at <= now() limit 100
  );
  insert into app.passkey_challenges (challenge_hash, purpose, user_id, session_id, expires_at)
  values (encode(sha256(convert_to(challenge, 'UTF8')), 'hex'), challenge_purpose, owner, owner_session,
          now() + app.passkey_challenge_lifetime());
  outcome := 'started';
end;
$$;
comment on function app.start_passkey_challenge(text, text, uuid, uuid, text, integer, integer) is
  'Stores a WebAuthn challenge for 5 minutes (a registration needs a recent proof and room), rate-limited per address; answers the account''s credential ids.';
revoke all on function app.start_passkey_challenge(text, text, uuid, uuid, text, integer, integer)
  from public, anon, authenticated;

-- Spends the challenge: deletes its row whatever it finds, and answers whether it was live and of this purpose,
-- account and session. Of many statements racing on one challenge, only one deletes the row.
create function app.spend_passkey_challenge(
  challenge text,
  challenge_purpose text,
  owner uuid,
  owner_session uuid
) returns boolean
language sql
set search_path = ''
as $$
  with spent as (
    delete from app.passkey_challenges c
    where c.challenge_hash = encode(sha256(convert_to(challenge, 'UTF8')), 'hex')
    returning c.*
  )
  select coalesce((
    select s.expires_at > now() and s.purpose = challenge_purpose
           and s.user_id is not distinct from owner and s.session_id is not distinct from owner_session
    from spent s
  ), false)
$$;
revoke all on function app.spend_passkey_challenge(text, text, uuid, uuid) from public, anon, authenticated;

-- 3. Stores a credential the function verified against `challenge`: the challenge must be this session's
-- registration challenge, the session must have given a proof lately, and the account must have room.
-- `outcome`: 'registered', 'challenge_invalid', 'limit_reached', 'already_registered'.
create function app.register_passkey(
  owner uuid,
  owner_session uuid,
  challenge text,
  new_credential_id text,
  new_public_key bytea,
  new_sign_count bigint,
  new_transports text[],
  new_device_type text,
  new_backed_up boolean,
  new_aaguid uuid,
  new_name text,
  client_address text,
  client_user_agent text,
  out outcome text,
  out passkey_id uuid,
  out created_at timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
begin
  if not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
  if not app.spend_passkey_challenge(challenge, 'register', owner, owner_session) then
    outcome := 'challenge_invalid';
    return;
  end if;
  -- Under the account's lock, so concurrent registrations each count the others.
  select * into account from app.users u where u.id = owner for update;
  if (select count(*) from app.passkeys p where p.user_id = owner) >= app.passkeys_max() then
    outcome := 'limit_reached';
    return;
  end if;
  insert into app.passkeys (user_id, credential_id, public_key, sign_count, transports, device_type, backed_up,
                            aaguid, name, trusted)
  values (owner, new_credential_id, new_public_key, new_sign_count, new_transports, new_device_type, new_backed_up,
          new_aaguid, new_name, account.is_verified)
  on conflict (credential_id) do nothing
  returning app.passkeys.id, app.passkeys.created_at into passkey_id, created_at;
  if passkey_id is null then
    outcome := 'already_registered';
    return;
  end if;
  perform app.record_security_event('passkey_added', owner, owner, client_address, client_user_agent,
    jsonb_build_object('passkeyId', passkey_id, 'name', new_name, 'synced', new_device_type = 'multiDevice'));
  insert into app.mail_outbox (recipient, subject, body)
  values (account.email, 'A passkey was added to your account',
          format('A passkey ("%s") was added to your notes account: it signs in without the password. If this '
                 || 'was not you, reset your password now with "Forgot password" and remove the passkey.', new_name));
  outcome := 'registered';
end;
$$;
comment on function app.register_passkey(uuid, uuid, text, text, bytea, bigint, text[], text, boolean, uuid, text, text, text) is
  'Stores a verified passkey for the JWT caller''s session: its registration challenge, a recent proof, at most app.passkeys_max(); logged and mailed.';
revoke all on function app.register_passkey(uuid, uuid, text, text, bytea, bigint, text[], text, boolean, uuid, text, text, text)
  from public, anon, authenticated;

-- The read a sign-in must make before it can verify: spends the challenge (for `challenge_purpose`, and the caller's
-- account and session unless 'sign_in') and answers the credential, with its account, when the challenge was good
-- and the credential is one of that account's. Nothing about the credential when the challenge was not.
create function app.begin_passkey_assertion(
  challenge text,
  challenge_purpose text,
  owner uuid,
  owner_session uuid,
  presented_credential_id text
) returns table (
  challenge_ok boolean,
  passkey_id uuid,
  user_id uuid,
  email text,
  public_key bytea,
  sign_count bigint,
  transports text[]
)
language plpgsql
set search_path = ''
as $$
declare
  live boolean := app.spend_passkey_challenge(challenge, challenge_purpose, owner, owner_session);
begin
  return query
    select live, p.id, p.user_id, u.email, p.public_key, p.sign_count, p.transports
    from (select) one
    left join app.passkeys p on live and p.credential_id = presented_credential_id
                                and (owner is null or p.user_id = owner)
    left join app.users u on u.id = p.user_id;
end;
$$;
revoke all on function app.begin_passkey_assertion(text, text, uuid, uuid, text) from public, anon, authenticated;

-- 4. Records a verified assertion's counter: it must be higher than the stored one, or both 0 (a synced passkey).
-- False, recorded as a cloned key, when it is not.
create function app.use_passkey(
  target_passkey uuid,
  new_sign_count bigint,
  now_backed_up boolean,
  client_address text,
  client_user_agent text
) returns boolean
language plpgsql
set search_path = ''
as $$
declare
  used app.passkeys%rowtype;
begin
  update app.passkeys p set sign_count = new_sign_count, backed_up = now_backed_up, last_used_at = now()
  where p.id = target_passkey and (new_sign_count > p.sign_count or (new_sign_count = 0 and p.sign_count = 0))
  returning * into used;
  if found then
    return true;
  end if;
  select * into used from app.passkeys p where p.id = target_passkey;
  if found then
    perform app.record_security_event('passkey_counter_regressed', used.user_id, null, client_address,
      client_user_agent, jsonb_build_object('passkeyId', used.id, 'storedCount', used.sign_count,
                                            'presentedCount', new_sign_count));
  end if;
  return false;
end;
$$;
revoke all on function app.use_passkey(uuid, bigint, boolean, text, text) from public, anon, authenticated;

-- A passkey sign-in, after the function verified the assertion: the counter, then an aal2 session for an active
-- account. `outcome`: 'accepted', 'counter_regressed', 'suspended' (the answer's account and session only when
-- accepted), in the shape of the second step's statements.
create function app.sign_in_with_passkey(
  target_passkey uuid,
  new_sign_count bigint,
  now_backed_up boolean,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns app.second_step
language plpgsql
set search_path = ''
as $$
declare
  owner uuid := (select p.user_id from app.passkeys p where p.id = target_passkey);
  result app.second_step;
begin
  if owner is null then
    result.outcome := 'gone';
    return result;
  end if;
  if not app.use_passkey(target_passkey, new_sign_count, now_backed_up, client_address, client_user_agent) then
    result.outcome := 'counter_regressed';
    return result;
  end if;
  if not exists (select from app.users u where u.id = owner and u.status = 'ACTIVE') then
    result.outcome := 'suspended';
    return result;
  end if;
  select 'accepted', null, null, s.* into result
  from app.start_session(owner, idle_seconds, max_lifetime_seconds, client_user_agent, client_address,
                         'passkey_sign_in', null, 'passkey') s;
  perform app.record_security_event('login_succeeded', owner, owner, client_address, client_user_agent,
    jsonb_build_object('sessionId', result.session_id, 'passkeyId', target_passkey));
  return result;
end;
$$;
revoke all on function app.sign_in_with_passkey(uuid, bigint, boolean, integer, integer, text, text)
  from public, anon, authenticated;

-- The second step with a passkey, after the function verified the assertion: the counter, then the caller's aal1
-- session ends and an aal2 one starts in its place, as a code of the factor does.
create function app.pass_second_step_with_passkey(
  owner uuid,
  caller_session uuid,
  target_passkey uuid,
  new_sign_count bigint,
  now_backed_up boolean,
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
  if not exists (select from app.passkeys p where p.id = target_passkey and p.user_id = owner) then
    result.outcome := 'gone';
    return result;
  end if;
  if not app.use_passkey(target_passkey, new_sign_count, now_backed_up, client_address, client_user_agent) then
    result.outcome := 'counter_regressed';
    return result;
  end if;
  return app.start_second_level_session(
    owner, 'accepted', 'passkey', caller_session, 'second_factor_verified', idle_seconds, max_lifetime_seconds,
    client_user_agent, client_address
  );
end;
$$;
revoke all on function app.pass_second_step_with_passkey(uuid, uuid, uuid, bigint, boolean, integer, integer, text, text)
  from public, anon, authenticated;

-- A proof with a passkey for POST /auth/reauthenticate: the counter, then the proof recorded on the caller's session.
-- `outcome`: 'accepted' (until `valid_until`), 'counter_regressed', 'gone'.
create function app.reauthenticate_with_passkey(
  owner uuid,
  caller_session uuid,
  target_passkey uuid,
  new_sign_count bigint,
  now_backed_up boolean,
  client_address text,
  client_user_agent text,
  out outcome text,
  out valid_until timestamptz
)
language plpgsql
set search_path = ''
as $$
begin
  if not exists (select from app.passkeys p where p.id = target_passkey and p.user_id = owner) then
    outcome := 'gone';
    return;
  end if;
  if not app.use_passkey(target_passkey, new_sign_count, now_backed_up, client_address, client_user_agent) then
    outcome := 'counter_regressed';
    return;
  end if;
  valid_until := app.record_reauthentication(owner, caller_session, 'passkey', null, client_address,
                                             client_user_agent);
  outcome := case when valid_until is null then 'gone' else 'accepted' end;
end;
$$;
revoke all on function app.reauthenticate_with_passkey(uuid, uuid, uuid, bigint, boolean, text, text)
  from public, anon, authenticated;

-- A wrong assertion of a known credential counts against the account's cap of failed sign-ins, as a wrong password
-- does; device tokens get past that cap as before, so the owner's devices are not locked out.
create function app.record_passkey_failure(
  owner uuid,
  reason text,
  account_window_seconds integer,
  client_address text,
  client_user_agent text
) returns void
language plpgsql
set search_path = ''
as $$
declare
  account_email text := (select u.email from app.users u where u.id = owner);
begin
  if account_email is null then
    return;
  end if;
  perform app.count_rate_limit_hit('login-account', account_email, account_window_seconds, account_email);
  perform app.record_security_event('login_failed', owner, owner, client_address, client_user_agent,
    jsonb_build_object('method', 'passkey', 'reason', reason));
end;
$$;
revoke all on function app.record_passkey_failure(uuid, text, integer, text, text) from public, anon, authenticated;

-- Whether the account has another way in than `except_passkey`: a password, an identity, another passkey.
create function app.has_other_way_in(owner uuid, except_passkey uuid, except_identity uuid) returns boolean
language sql stable
set search_path = ''
as $$
  select exists (select from app.users u where u.id = owner and u.password_hash is not null)
      or exists (select from app.identities i where i.user_id = owner and i.id is distinct from except_identity)
      or exists (select from app.passkeys p where p.user_id = owner and p.id is distinct from except_passkey)
$$;
revoke all on function app.has_other_way_in(uuid, uuid, uuid) from public, anon, authenticated;

-- Removes one of the caller's passkeys: the session must have given a proof lately, and the passkey must not be the
-- account's last way in. `outcome`: 'removed', 'not_found', 'last_sign_in_method'. Logged and mailed.
create function app.remove_passkey(owner uuid, target_passkey uuid, client_address text, client_user_agent text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  removed app.passkeys%rowtype;
begin
  if not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
  select * into account from app.users u where u.id = owner for update;
  if not exists (select from app.passkeys p where p.id = target_passkey and p.user_id = owner) then
    return 'not_found';
  end if;
  if not app.has_other_way_in(owner, target_passkey, null) then
    return 'last_sign_in_method';
  end if;
  delete from app.passkeys p where p.id = target_passkey and p.user_id = owner returning * into removed;
  perform app.record_security_event('passkey_removed', owner, owner, client_address, client_user_agent,
    jsonb_build_object('passkeyId', removed.id, 'name', removed.name));
  insert into app.mail_outbox (recipient, subject, body)
  values (account.email, 'A passkey was removed from your account',
          format('The passkey "%s" was removed from your notes account. If this was not you, reset your password '
                 || 'now with "Forgot password": a reset signs every device out.', removed.name));
  return 'removed';
end;
$$;
revoke all on function app.remove_passkey(uuid, uuid, text, text) from public, anon, authenticated;

-- An admin's removal of another account's lost passkey, as app.admin_remove_second_factor: never the admin's own
-- account, never another admin's. Ends the account's sessions, logged and mailed. Answers 'removed', 'not_found',
-- 'own_account', 'admin_account' or 'unknown_user'.
create function app.admin_remove_passkey(target uuid, target_passkey uuid) returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  removed app.passkeys%rowtype;
begin
  select * into account from app.users u where u.id = target for update;
  if not found then
    return 'unknown_user';
  end if;
  if account.id = (select auth.uid()) then
    return 'own_account';
  end if;
  if account.role = 'ADMIN' then
    return 'admin_account';
  end if;
  delete from app.passkeys p where p.id = target_passkey and p.user_id = target returning * into removed;
  if not found then
    return 'not_found';
  end if;
  update app.sessions s set revoked_at = now(), revoked_reason = 'second_factor_changed'
  where s.user_id = target and s.revoked_at is null and s.expires_at > now();
  perform app.record_security_event('passkey_removed', target, app.audit_actor_or(target),
    app.audit_setting('address'), app.audit_setting('user_agent'),
    jsonb_build_object('passkeyId', removed.id, 'name', removed.name, 'byAdmin', true));
  insert into app.mail_outbox (recipient, subject, body)
  values (account.email, 'A passkey was removed from your account',
          format('An administrator removed the passkey "%s" from your notes account, and every device was signed '
                 || 'out.', removed.name));
  return 'removed';
end;
$$;
revoke all on function app.admin_remove_passkey(uuid, uuid) from public, anon, authenticated;

-- A passkey is a way in: an identity is not the last one while the account has a passkey.
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
  if not app.has_other_way_in(owner, null, target_identity) then
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

-- A reset keeps the passkeys of a proven address and drops those added while it was unproven, as it does factors.
create or replace function app.reclaim_account(
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
  dropped_passkey app.passkeys%rowtype;
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
  for dropped_passkey in
    delete from app.passkeys p where p.user_id = owner and (not address_was_proven or not p.trusted)
    returning p.*
  loop
    perform app.record_security_event('passkey_removed', owner, null, client_address, client_user_agent,
      jsonb_build_object('passkeyId', dropped_passkey.id, 'name', dropped_passkey.name,
                         'reason', 'account_reclaimed'));
    removed := array_append(removed, format('the passkey "%s" added on %s before the address was proven',
      dropped_passkey.name, to_char(dropped_passkey.created_at at time zone 'UTC', 'YYYY-MM-DD')));
  end loop;
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
  'After a code proved the address: removes what was added while it was unproven (factors, passkeys, identities) and the identities linked in the last recent_days, unlocks the factor, and mails the owner.';
