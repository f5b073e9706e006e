-- Passwords are hashed in the functions now, not in Postgres (database CPU is what every request of every
-- user shares, so a login flood must not spend it): app.reset_password takes the new password's hash.
-- Reset codes stay bcrypt-hashed here at cost 6, a sixteenth of a password's work at the default cost 10.

drop function app.reset_password(text, text, text, integer, integer, integer);

-- The outcome of app.reset_password: 'unknown-user', 'throttled', 'bad-code', 'suspended' or 'updated'.
create function app.reset_password(
  target_email text,
  code text,
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
    set password_hash = new_password_hash,
        is_verified = true
    where u.id = target.id
    returning 'updated', null::integer, u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
              u.created_at, u.updated_at, u.token_version;
end;
$$;
comment on function app.reset_password(text, text, text, integer, integer) is
  'Sets a new password hash (made by the function) with a reset code: consumes a valid code, or uses up one attempt of a wrong one and counts it against the account. Returns the outcome and, when updated, the account; when throttled, the seconds to wait.';
revoke all on function app.reset_password(text, text, text, integer, integer) from public, anon, authenticated;
