-- The two password-reset steps as one statement each, so each costs a single
-- round trip to Postgres: the steps' reads and writes depend on each other
-- (lock the user, take a mail slot, store the code, queue the mail), and here
-- they run next to the data instead of one network trip apiece.
-- Both run as the functions' own database role; the API roles may not call them.

create function app.request_password_reset(
  target_email text,
  code text,
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
  -- Hashed first, for known and unknown emails alike, so the answer takes as long either way.
  new_code_hash text := extensions.crypt(code, extensions.gen_salt('bf', 6));
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
  'Stores a new reset code for the account with target_email and queues its mail, unless the account is unknown or its reset-mail quota is used up.';
revoke all on function app.request_password_reset(text, text, integer, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- The outcome of app.reset_password: 'unknown-user', 'throttled', 'bad-code', 'suspended' or 'updated'.
create function app.reset_password(
  target_email text,
  code text,
  new_password text,
  bcrypt_cost integer,
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
  -- day whatever the attacker's addresses (README, Security: the odds).
  wait := app.rate_limit_wait('reset-code-account', target.id::text, max_wrong_codes);
  if wait > 0 then
    return query select 'throttled', wait, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  select c.code_hash = extensions.crypt(code, c.code_hash) into code_matches
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

  -- The users_revoke_tokens trigger raises token_version here, so the one returned is the new one;
  -- a proved mailbox also marks the account verified.
  return query
    update app.users u
    set password_hash = extensions.crypt(new_password, extensions.gen_salt('bf', bcrypt_cost)),
        is_verified = true
    where u.id = target.id
    returning 'updated', null::integer, u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
              u.created_at, u.updated_at, u.token_version;
end;
$$;
comment on function app.reset_password(text, text, text, integer, integer, integer) is
  'Sets a new password with a reset code: consumes a valid code, or uses up one attempt of a wrong one and counts it against the account. Returns the outcome and, when updated, the account; when throttled, the seconds to wait.';
revoke all on function app.reset_password(text, text, text, integer, integer, integer) from public, anon, authenticated;
