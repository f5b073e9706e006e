-- Accounts people manage themselves: a verification code mailed at sign-up,
-- a password change while signed in, and deleting the account with
-- everything it owns. Each step is one statement (a function here), so each
-- request costs one round trip beside login's attempt count.

-- At most one live verification code per account. The code is stored as an HMAC under a key the functions
-- derive from JWT_SECRET, so a copy of this table cannot be searched offline for the 10^6 possible codes.
create table app.email_verification_codes (
  user_id uuid primary key references app.users (id) on delete cascade,
  code_hash text not null,
  expires_at timestamptz not null,
  attempts_left integer not null check (attempts_left >= 0),
  -- When the last code was mailed, and how many were mailed in the day that started at day_started_at.
  sent_at timestamptz not null default now(),
  day_started_at timestamptz not null default now(),
  sent_in_day integer not null default 1 check (sent_in_day >= 0)
);
comment on table app.email_verification_codes is
  'The live email verification code of an unverified account, as an HMAC; deleted when the address is verified.';
revoke all on table app.email_verification_codes from public, anon, authenticated;

-- Verification calls are limited per client address like the other code endpoints.
alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'signup-address', 'reset-address', 'reset-code-account', 'refresh-address',
  'verify-address'
));

-- The outcome of app.verify_email: 'bad-code', 'suspended' or 'verified'.
create function app.verify_email(target_email text, presented_hash text)
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
declare
  target app.users%rowtype;
  code app.email_verification_codes%rowtype;
begin
  select * into target from app.users u where u.email = target_email for update;
  if found then
    select * into code from app.email_verification_codes c where c.user_id = target.id for update;
  end if;
  -- An unknown address, no code, an expired or burned one: the same answer as a wrong code.
  if code.user_id is null or code.expires_at <= now() or code.attempts_left <= 0 then
    return query select 'bad-code', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  if code.code_hash <> presented_hash then
    -- The statement commits, so the attempt stays used.
    update app.email_verification_codes c set attempts_left = c.attempts_left - 1 where c.user_id = target.id;
    return query select 'bad-code', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  delete from app.email_verification_codes c where c.user_id = target.id;
  -- Checked only after a valid code, as login checks it only after the password.
  if target.status = 'SUSPENDED' then
    return query select 'suspended', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  return query
    update app.users u set is_verified = true where u.id = target.id
    returning 'verified', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
end;
$$;
comment on function app.verify_email(text, text) is
  'Marks the account verified when presented_hash is its live code''s; a wrong code uses up one of its attempts.';
revoke all on function app.verify_email(text, text) from public, anon, authenticated;

-- Stores a new code for an unverified account and queues its mail, at most once per min_interval_seconds and
-- mails_per_day times a day; for a verified or unknown address it does nothing, and the caller answers the same.
create function app.resend_verification(
  target_email text,
  new_code_hash text,
  code_ttl_hours integer,
  code_attempts integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text,
  mail_body text
) returns void
language plpgsql
set search_path = ''
as $$
declare
  target app.users%rowtype;
begin
  select * into target from app.users u where u.email = target_email for update;
  if not found or target.is_verified then
    return;
  end if;
  insert into app.email_verification_codes as c (user_id, code_hash, expires_at, attempts_left)
  values (target.id, new_code_hash, now() + make_interval(hours => code_ttl_hours), code_attempts)
  on conflict (user_id) do update set
    code_hash = excluded.code_hash,
    expires_at = excluded.expires_at,
    attempts_left = excluded.attempts_left,
    sent_at = now(),
    day_started_at = case when c.day_started_at <= now() - interval '1 day' then now() else c.day_started_at end,
    sent_in_day = case when c.day_started_at <= now() - interval '1 day' then 1 else c.sent_in_day + 1 end
    where c.sent_at <= now() - make_interval(secs => min_interval_seconds)
      and (c.day_started_at <= now() - interval '1 day' or c.sent_in_day < mails_per_day);
  if found then
    insert into app.mail_outbox (recipient, subject, body) values (target.email, mail_subject, mail_body);
  end if;
end;
$$;
comment on function app.resend_verification(text, text, integer, integer, integer, integer, text, text) is
  'Replaces an unverified account''s verification code and queues its mail, within the per-account mail quota.';
revoke all on function app.resend_verification(text, text, integer, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- The outcome of app.change_password: 'stale' or 'changed'. The function checked the current password
-- against expected_hash; when the stored hash is no longer that one (changed meanwhile), nothing changes.
-- The update raises token_version (users_revoke_tokens), which ends every session of the account
-- (users_end_sessions) before the caller starts the new one.
create function app.change_password(owner uuid, expected_hash text, new_hash text)
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
    where u.id = owner and u.password_hash = expected_hash
    returning 'changed', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
  if not found then
    return query select 'stale', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
  end if;
end;
$$;
comment on function app.change_password(uuid, text, text) is
  'Sets a new password hash while the stored one is still the one the current password was checked against; every session of the account ends with it.';
revoke all on function app.change_password(uuid, text, text) from public, anon, authenticated;

-- Deletes the account while its stored hash is still the one the password was checked against: its row and,
-- through the foreign keys, its notes, counters, sessions, codes and quotas; and here, the rows keyed by its
-- address or id that no key ties to it (rate-limit counts, queued mails). Answers whether it did.
create function app.delete_account(owner uuid, expected_hash text) returns boolean
language plpgsql
set search_path = ''
as $$
declare
  target app.users%rowtype;
begin
  select * into target from app.users u where u.id = owner and u.password_hash = expected_hash for update;
  if not found then
    return false;
  end if;
  delete from app.rate_limits r where r.email = target.email or r.key = target.id::text;
  delete from app.mail_outbox m where m.recipient = target.email;
  delete from app.users u where u.id = owner;
  return true;
end;
$$;
comment on function app.delete_account(uuid, text) is
  'Deletes the account and everything that holds its id or address, while its password hash is the one checked.';
revoke all on function app.delete_account(uuid, text) from public, anon, authenticated;

-- With REQUIRE_EMAIL_VERIFICATION, the functions set app.require_email_verification for a notes request, and
-- the statement that opens it refuses an unverified caller with PT403, in the same round trip.
create or replace function app.require_active_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not app.caller_is_active() then
    raise sqlstate 'PT401' using message = 'access token revoked or account inactive';
  end if;
  if current_setting('app.require_email_verification', true) = 'true'
     and not exists (select from app.users u where u.id = (select auth.uid()) and u.is_verified) then
    raise sqlstate 'PT403' using message = 'email address not verified';
  end if;
end;
$$;
comment on function app.require_active_caller() is
  'Raises PT401 unless app.caller_is_active(), and PT403 for an unverified caller when the request requires verification.';
