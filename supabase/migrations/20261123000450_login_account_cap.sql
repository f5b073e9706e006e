-- Failed logins counted per account, from every address, beside the per-address and per-(email, address)
-- counts: past the cap (a setting, 20 an hour by default), the account refuses logins from devices it does
-- not know, while a device its owner has logged in from before (a device token bound to the account) still
-- gets in. The per-address limits cannot bound guessing where the client address is unknown (hosted
-- Supabase without CLIENT_ADDRESS_HEADER) or spread over many addresses; this count can.

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'login-account', 'signup-address', 'reset-address', 'reset-code-account',
  'reset-request-address', 'refresh-address', 'verify-address'
));

drop function app.take_login_attempt(text, text, integer, integer, integer, integer);

-- A login attempt: refused (nothing counted) while the account (unless trusted_user, the account a valid
-- device token names, is this email's), the address or the (email, address) pair is over its limit, and then
-- recorded as login_refused_by_limit on a known account's security log;
-- otherwise counted against each before the password is checked, so concurrent guesses each see the
-- others. A success takes its own count back from the account and clears the pair's. Returns the seconds
-- to wait, or 0.
create function app.take_login_attempt(
  login_email text,
  client_address text,
  failure_window_seconds integer,
  max_failures integer,
  address_window_seconds integer,
  max_attempts integer,
  account_window_seconds integer,
  max_account_failures integer,
  trusted_user uuid,
  client_user_agent text
) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  pair text := login_email || ' ' || client_address;
  known_device boolean := trusted_user is not null
    and exists (select from app.users u where u.id = trusted_user and u.email = login_email);
  wait integer := 0;
begin
  perform app.lock_rate_limit_keys('login-account ' || login_email, 'login-address ' || client_address,
                                   'login-failure ' || pair);
  if not known_device then
    wait := app.rate_limit_wait('login-account', login_email, max_account_failures);
  end if;
  if client_address is not null then
    wait := greatest(
      wait,
      app.rate_limit_wait('login-address', client_address, max_attempts),
      app.rate_limit_wait('login-failure', pair, max_failures)
    );
  end if;
  if wait > 0 then
    -- On the account's security log (app.security_events, defined by a later migration), for a known email.
    perform app.record_security_event('login_refused_by_limit', u.id, u.id, client_address, client_user_agent,
                                      jsonb_build_object('retryAfter', wait))
    from app.users u where u.email = login_email;
  else
    perform app.count_rate_limit_hit('login-account', login_email, account_window_seconds, login_email);
    if client_address is not null then
      perform app.count_rate_limit_hit('login-address', client_address, address_window_seconds);
      perform app.count_rate_limit_hit('login-failure', pair, failure_window_seconds, login_email);
    end if;
  end if;
  return wait;
end;
$$;
revoke all on function app.take_login_attempt(text, text, integer, integer, integer, integer, integer, integer, uuid, text)
  from public, anon, authenticated;
