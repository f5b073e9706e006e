-- No hashing in Postgres at all. Reset codes were bcrypt-hashed here (pgcrypto's crypt at cost 6) for every
-- queued request, known address or not, on the database every user shares. They are stored now as an HMAC
-- the functions make under a key derived from JWT_SECRET, as verification codes are: a copy of the table
-- cannot be searched offline for the 10^6 codes without that secret, and Postgres only compares.
-- Codes issued before this migration were bcrypt hashes that nothing can match any more: they are dropped,
-- and their owners ask for a new one.

delete from app.password_reset_codes;
comment on table app.password_reset_codes is
  'At most one live reset code per user, stored as an HMAC made by the functions; a new request replaces it, a correct use deletes it.';

drop function app.resolve_password_reset_requests(text[], text[], integer, integer, integer, integer, text);
drop function app.request_password_reset(text, text, integer, integer, integer, integer, text, text);
drop function app.reset_password(text, text, text, integer, integer);

create function app.request_password_reset(
  target_email text,
  new_code_hash text,
  code_ttl_minutes integer,
  code_attempts integer,
  min_interval_seconds integer,
  mails_per_hour integer,
  mail_subject text,
  mail_body text
) returns void
language plpgsql
set search_path = ''
as $$
declare
  target_user uuid;
begin
  select id into target_user from app.users where email = target_email for update;
  if not found then
    return;
  end if;

  -- Over quota the old code stays: a code nobody was sent would only lock its owner out.
  insert into app.reset_mail_quota as q (user_id, last_sent_at, window_started_at, sent_in_window)
  values (target_user, now(), now(), 1)
  on conflict (user_id) do update set
    last_sent_at = now(),
    window_started_at = case when q.window_started_at <= now() - interval '1 hour'
                             then now() else q.window_started_at end,
    sent_in_window = case when q.window_started_at <= now() - interval '1 hour'
                          then 1 else q.sent_in_window + 1 end
    where q.last_sent_at <= now() - make_interval(secs => min_interval_seconds)
      and (q.window_started_at <= now() - interval '1 hour' or q.sent_in_window < mails_per_hour);
  if not found then
    return;
  end if;

  -- Code and mail commit together: no mail for a code that was not stored, and no code without its mail.
  insert into app.password_reset_codes (user_id, code_hash, expires_at, attempts_left)
  values (target_user, new_code_hash, now() + make_interval(mins => code_ttl_minutes), code_attempts)
  on conflict (user_id) do update
    set code_hash = excluded.code_hash, expires_at = excluded.expires_at,
        attempts_left = excluded.attempts_left, created_at = now();

  insert into app.mail_outbox (recipient, subject, body) values (target_email, mail_subject, mail_body);
end;
$$;
comment on function app.request_password_reset(text, text, integer, integer, integer, integer, text, text) is
  'Stores a new reset code (its HMAC) for the account with target_email and queues its mail, unless the account is unknown or its reset-mail quota is used up.';
revoke all on function app.request_password_reset(text, text, integer, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- Resolves up to cardinality(code_hashes) of the oldest requests in one transaction, each with the code (as its
-- HMAC) and mail body of its position; concurrent drainers skip each other's rows.
create function app.resolve_password_reset_requests(
  code_hashes text[],
  mail_bodies text[],
  code_ttl_minutes integer,
  code_attempts integer,
  min_interval_seconds integer,
  mails_per_hour integer,
  mail_subject text
) returns integer
language plpgsql
set search_path = ''
as $$
declare
  taken text[];
begin
  with t as (
    delete from app.password_reset_requests r
    where r.id in (
      select q.id from app.password_reset_requests q order by q.id limit cardinality(code_hashes)
      for update skip locked
    )
    returning r.id, r.email
  )
  select coalesce(array_agg(t.email order by t.id), '{}') into taken from t;
  for i in 1 .. cardinality(taken) loop
    perform app.request_password_reset(
      taken[i], code_hashes[i], code_ttl_minutes, code_attempts, min_interval_seconds, mails_per_hour,
      mail_subject, mail_bodies[i]
    );
  end loop;
  return cardinality(taken);
end;
$$;
comment on function app.resolve_password_reset_requests(text[], text[], integer, integer, integer, integer, text) is
  'Takes the oldest reset requests (one per given code hash) and resolves each with app.request_password_reset; returns how many.';
revoke all on function app.resolve_password_reset_requests(text[], text[], integer, integer, integer, integer, text)
  from public, anon, authenticated;

-- The outcome: 'unknown-user', 'throttled', 'bad-code', 'suspended' or 'updated'. As before, with the code's
-- HMAC compared instead of a bcrypt hash computed here.
create function app.reset_password(
  target_email text,
  presented_hash text,
  new_password_hash text,
  max_wrong_codes integer,
  wrong_codes_window_seconds integer
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

  -- Wrong codes count per account across every address and every code, so guessing is bounded per
  -- day whatever the attacker's addresses (docs/security.md, the odds of guessing a reset code).
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
    -- Each code works once.
    delete from app.password_reset_codes c where c.user_id = target.id;
  elsif code_matches is not null then
    -- A wrong code uses up one attempt; the statement commits, so the attempt stays used.
    update app.password_reset_codes c set attempts_left = c.attempts_left - 1 where c.user_id = target.id;
  end if;

  if not coalesce(code_matches, false) then
    perform app.count_rate_limit_hit('reset-code-account', target.id::text, wrong_codes_window_seconds);
    return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  -- Checked only after a valid code, as login checks it only after the password: no token for a suspended account.
  if target.status = 'SUSPENDED' then
    return query select 'suspended', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  -- The owner proved the mailbox: earlier failed logins of the email, from any address, are lifted.
  delete from app.rate_limits r where r.bucket = 'login-failure' and r.email = target_email;

  -- The new hash raises token_version and the device generation (users_revoke_tokens), which ends every session
  -- (users_end_sessions) and voids every device token issued before; a proved mailbox also marks the account
  -- verified, and its pending verification code goes with it.
  delete from app.email_verification_codes c where c.user_id = target.id;
  return query
    update app.users u
    set password_hash = new_password_hash,
        is_verified = true
    where u.id = target.id
    returning 'updated', null::integer, u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
              u.created_at, u.updated_at, u.token_version;
end;
$$;
comment on function app.reset_password(text, text, text, integer, integer) is
  'Sets a new password hash (made by the function) with a reset code (its HMAC): consumes a valid code, or uses up one attempt of a wrong one and counts it against the account. Returns the outcome and, when updated, the account; when throttled, the seconds to wait.';
revoke all on function app.reset_password(text, text, text, integer, integer) from public, anon, authenticated;
