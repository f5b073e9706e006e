-- Fixed-window rate limits, one table for every limit the service keeps, so
-- each is one definition of the window and one way of pruning. A refused
-- attempt (429) is not counted, so a client over its limit cannot push other
-- keys' windows along. Edge isolates share no memory, so the counts live here.
-- Replaces app.login_throttle, whose limit per email let anyone lock any
-- account out; login failures are now counted per (email, client address).

create table app.rate_limits (
  bucket text not null check (bucket in (
    'login-address', 'login-failure', 'signup-address', 'reset-address', 'reset-code-account'
  )),
  key text not null check (char_length(key) <= 400),
  hits integer not null check (hits >= 0),
  window_ends_at timestamptz not null,
  -- Set for login failures, so setting a new password with a code can clear every failure of the email.
  email text,
  primary key (bucket, key)
);
comment on table app.rate_limits is
  'Fixed-window counters: hits of (bucket, key) until window_ends_at. Expired rows are pruned as new hits are counted.';
comment on column app.rate_limits.bucket is
  'login-address: logins per client address; login-failure: logins per (email, address) not followed by a success; signup-address: registers per address; reset-address: create-password calls per address; reset-code-account: wrong reset codes per account.';
create index rate_limits_expiry_idx on app.rate_limits (window_ends_at);
create index rate_limits_email_idx on app.rate_limits (email) where email is not null;
revoke all on table app.rate_limits from public, anon, authenticated;

-- Seconds until (bucket, key) may be hit again under max_hits, or 0; counts nothing.
create function app.rate_limit_wait(limit_bucket text, limit_key text, max_hits integer) returns integer
language sql stable
set search_path = ''
as $$
  select coalesce((
    select greatest(1, ceil(extract(epoch from r.window_ends_at - now())))::integer
    from app.rate_limits r
    where r.bucket = limit_bucket and r.key = limit_key and r.window_ends_at > now() and r.hits >= max_hits
  ), 0)
$$;

-- Counts one hit of (bucket, key), opening a new window when the last one has ended. Each hit also
-- deletes up to two expired rows, so the table stays about as large as its live windows, with no cron.
create function app.count_rate_limit_hit(
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
    window_ends_at = case when r.window_ends_at <= now() then excluded.window_ends_at else r.window_ends_at end;
end;
$$;

-- Counts one hit unless the limit is reached; returns the seconds to wait (nothing counted) or 0.
-- A null key (no trustworthy client address) is not limited at all.
create function app.take_rate_limit(
  limit_bucket text,
  limit_key text,
  window_seconds integer,
  max_hits integer
) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  wait integer;
begin
  if limit_key is null then
    return 0;
  end if;
  -- Taken under the row's lock, so concurrent hits of one key each see the others.
  perform from app.rate_limits r where r.bucket = limit_bucket and r.key = limit_key for update;
  wait := app.rate_limit_wait(limit_bucket, limit_key, max_hits);
  if wait = 0 then
    perform app.count_rate_limit_hit(limit_bucket, limit_key, window_seconds);
  end if;
  return wait;
end;
$$;

-- As app.take_rate_limit, but raises SQLSTATE PT429 (detail: the seconds to wait) when the limit is
-- reached, so the statements after it in the same transaction do not run and nothing is counted.
create function app.require_rate_limit(
  limit_bucket text,
  limit_key text,
  window_seconds integer,
  max_hits integer
) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  wait integer := app.take_rate_limit(limit_bucket, limit_key, window_seconds, max_hits);
begin
  if wait > 0 then
    raise sqlstate 'PT429' using message = 'rate limit reached', detail = wait::text;
  end if;
end;
$$;

-- A login attempt: refused (nothing counted) while the address or the (email, address) pair is over
-- its limit; otherwise counted against both before the password is checked, so concurrent guesses
-- each see the others. A success clears the pair's count. Returns the seconds to wait, or 0.
create function app.take_login_attempt(
  login_email text,
  client_address text,
  failure_window_seconds integer,
  max_failures integer,
  address_window_seconds integer,
  max_attempts integer
) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  pair text := login_email || ' ' || client_address;
  wait integer;
begin
  if client_address is null then
    return 0;
  end if;
  perform from app.rate_limits r
  where (r.bucket = 'login-address' and r.key = client_address) or (r.bucket = 'login-failure' and r.key = pair)
  for update;
  wait := greatest(
    app.rate_limit_wait('login-address', client_address, max_attempts),
    app.rate_limit_wait('login-failure', pair, max_failures)
  );
  if wait = 0 then
    perform app.count_rate_limit_hit('login-address', client_address, address_window_seconds);
    perform app.count_rate_limit_hit('login-failure', pair, failure_window_seconds, login_email);
  end if;
  return wait;
end;
$$;

revoke all on function app.rate_limit_wait(text, text, integer) from public, anon, authenticated;
revoke all on function app.count_rate_limit_hit(text, text, integer, text) from public, anon, authenticated;
revoke all on function app.take_rate_limit(text, text, integer, integer) from public, anon, authenticated;
revoke all on function app.require_rate_limit(text, text, integer, integer) from public, anon, authenticated;
revoke all on function app.take_login_attempt(text, text, integer, integer, integer, integer)
  from public, anon, authenticated;

drop function app.count_login_attempt(text, text, integer, integer);
drop table app.login_throttle;
