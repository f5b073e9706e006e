-- Refused logins can no longer flood the security log or tell known addresses from unknown ones.
--
-- Before, every refused attempt (429) of a known email wrote a login_refused_by_limit event, and refused
-- attempts are not limited: anyone could grow app.security_events without bound, and the write (a known
-- email's only) made its refusal measurably slower. Now the refusal is logged once per limit and window: the
-- counter row that refused it is marked, and only an attempt that marks it writes the event. The mark is
-- an update of a row that exists for any email (counted attempts create it), so known and unknown emails do
-- the same work; after the first refusal of a window, neither writes at all.
--
-- Two new counts: failures made with a device token, per device token (a device token is no longer an
-- unlimited pass past the account's cap), and passwords re-entered with a live session, per session (the
-- account's cap no longer applies there, so someone else's guessing cannot lock a signed-in owner out).

alter table app.rate_limits add column refusal_logged boolean not null default false;
comment on column app.rate_limits.refusal_logged is
  'Whether an attempt refused by this count in its current window has been logged; at most one event a window.';

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'login-account', 'login-device', 'signup-address', 'reset-address',
  'reset-code-account', 'reset-request-address', 'refresh-address', 'verify-address', 'reentry-session'
));
comment on column app.rate_limits.bucket is
  'login-address: logins per client address; login-failure: logins per (email, address) not followed by a success; login-account: logins per email from every address; login-device: logins per device token; signup-address: registers per address; reset-address: create-password calls per address; reset-code-account: wrong reset codes per account; reset-request-address: request-password-reset calls per address; refresh-address: session refreshes per address; verify-address: verify-email and resend-verification calls per address; reentry-session: passwords re-entered per session.';

-- As before; a new window also starts with its refusal not yet logged.
create or replace function app.count_rate_limit_hit(
  limit_bucket text,
  limit_key text,
  window_seconds integer,
  failure_email text default null
) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  delete from app.rate_limits r
  where (r.bucket, r.key) in (
    select e.bucket, e.key from app.rate_limits e where e.window_ends_at <= now() limit 2 for update skip locked
  );
  insert into app.rate_limits as r (bucket, key, hits, window_ends_at, email)
  values (limit_bucket, limit_key, 1, now() + make_interval(secs => window_seconds), failure_email)
  on conflict (bucket, key) do update set
    hits = case when r.window_ends_at <= now() then 1 else r.hits + 1 end,
    refusal_logged = case when r.window_ends_at <= now() then false else r.refusal_logged end,
    window_ends_at = case when r.window_ends_at <= now() then excluded.window_ends_at else r.window_ends_at end;
end;
$$;

-- Marks the refusal of (bucket, key) as logged; true only for the first refusal of its window.
create function app.first_refusal_of_window(limit_bucket text, limit_key text) returns boolean
language sql volatile
set search_path = ''
as $$
  with marked as (
    update app.rate_limits r set refusal_logged = true
    where r.bucket = limit_bucket and r.key = limit_key and r.window_ends_at > now() and not r.refusal_logged
    returning 1
  )
  select exists (select from marked)
$$;
revoke all on function app.first_refusal_of_window(text, text) from public, anon, authenticated;

drop function app.take_login_attempt(text, text, integer, integer, integer, integer, integer, integer, uuid, text);

-- A login attempt: refused (nothing counted) while the address, the (email, address) pair, or the account is
-- over its limit; for a device token of the account's current generation (device_user, device_generation),
-- the device token's own count of failures stands in for the account's. A refusal is logged on a known
-- account's security log once per refusing count and window. Otherwise the attempt is counted against each
-- before the password is checked, so concurrent guesses each see the others; a success takes its own count
-- back from the account and the device. Returns the seconds to wait, or 0.
create function app.take_login_attempt(
  login_email text,
  client_address text,
  failure_window_seconds integer,
  max_failures integer,
  address_window_seconds integer,
  max_attempts integer,
  account_window_seconds integer,
  max_account_failures integer,
  device_user uuid,
  device_generation integer,
  device_key text,
  device_window_seconds integer,
  max_device_failures integer,
  client_user_agent text
) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  pair text := login_email || ' ' || client_address;
  known_device boolean := device_user is not null and exists (
    select from app.users u
    where u.id = device_user and u.email = login_email and u.device_generation = take_login_attempt.device_generation
  );
  -- The count that stands for the account: its own, or a known device's.
  account_bucket text := case when known_device then 'login-device' else 'login-account' end;
  account_key text := case when known_device then device_key else login_email end;
  account_max integer := case when known_device then max_device_failures else max_account_failures end;
  waits integer[];
  newly_logged boolean;
begin
  perform app.lock_rate_limit_keys(account_bucket || ' ' || account_key, 'login-address ' || client_address,
                                   'login-failure ' || pair);
  waits := array[
    app.rate_limit_wait(account_bucket, account_key, account_max),
    case when client_address is null then 0 else app.rate_limit_wait('login-address', client_address, max_attempts) end,
    case when client_address is null then 0 else app.rate_limit_wait('login-failure', pair, max_failures) end
  ];
  if greatest(waits[1], waits[2], waits[3]) > 0 then
    -- Each count that refuses marks its row, which counted attempts created for known and unknown emails alike.
    -- Only refusing rows are marked, each on its own: SQL does not promise to skip the right side of an `and`.
    newly_logged := false;
    if waits[1] > 0 then
      newly_logged := app.first_refusal_of_window(account_bucket, account_key);
    end if;
    if waits[2] > 0 then
      if app.first_refusal_of_window('login-address', client_address) then newly_logged := true; end if;
    end if;
    if waits[3] > 0 then
      if app.first_refusal_of_window('login-failure', pair) then newly_logged := true; end if;
    end if;
    if newly_logged then
      -- On the account's security log (app.security_events), for a known email.
      perform app.record_security_event('login_refused_by_limit', u.id, u.id, client_address, client_user_agent,
                                        jsonb_build_object('retryAfter', greatest(waits[1], waits[2], waits[3])))
      from app.users u where u.email = login_email;
    end if;
    return greatest(waits[1], waits[2], waits[3]);
  end if;
  perform app.count_rate_limit_hit('login-account', login_email, account_window_seconds, login_email);
  if known_device then
    perform app.count_rate_limit_hit('login-device', device_key, device_window_seconds, login_email);
  end if;
  if client_address is not null then
    perform app.count_rate_limit_hit('login-address', client_address, address_window_seconds);
    perform app.count_rate_limit_hit('login-failure', pair, failure_window_seconds, login_email);
  end if;
  return 0;
end;
$$;
revoke all on function app.take_login_attempt(
  text, text, integer, integer, integer, integer, integer, integer, uuid, integer, text, integer, integer, text
) from public, anon, authenticated;

-- A password re-entered by a signed-in user (to change it or delete the account): counted per session, not
-- against the account's cap, which strangers fill by guessing. Returns the seconds to wait, or 0.
create function app.take_password_reentry(session_key text, window_seconds integer, max_attempts integer)
returns integer
language sql volatile
set search_path = ''
as $$
  select app.take_rate_limit('reentry-session', session_key, window_seconds, max_attempts)
$$;
revoke all on function app.take_password_reentry(text, integer, integer) from public, anon, authenticated;

-- User agents on the security log are kept to 256 characters.
create or replace function app.record_security_event(
  event_type text,
  subject uuid,
  actor uuid,
  client_address text,
  client_user_agent text,
  event_details jsonb
) returns void
language sql
security definer
set search_path = ''
as $$
  insert into app.security_events (type, user_id, actor_id, address, user_agent, details)
  values (event_type, subject, actor, left(client_address, 100), left(client_user_agent, 256),
          coalesce(event_details, '{}'))
$$;
