-- One login attempt counted against one throttle key, as a named function, so
-- the email and the client-address limits share a single definition of the
-- fixed window.

create function app.count_login_attempt(
  attempt_scope text,
  attempt_key text,
  window_seconds integer,
  max_attempts integer
) returns integer
language sql volatile
set search_path = ''
as $$
  -- The first attempt after a window ends opens a new one; the row stays locked only for this statement.
  with counted as (
    insert into app.login_throttle as t (scope, key, attempts, window_started_at)
    values (attempt_scope, attempt_key, 1, now())
    on conflict (scope, key) do update set
      attempts = case when t.window_started_at <= now() - make_interval(secs => window_seconds)
                      then 1 else t.attempts + 1 end,
      window_started_at = case when t.window_started_at <= now() - make_interval(secs => window_seconds)
                               then now() else t.window_started_at end
    returning t.attempts, t.window_started_at + make_interval(secs => window_seconds) as window_ends_at
  )
  select case when attempts > max_attempts
              then greatest(1, ceil(extract(epoch from window_ends_at - now())))::integer
              else 0 end
  from counted
$$;
comment on function app.count_login_attempt(text, text, integer, integer) is
  'Counts one login attempt for (scope, key) in its fixed window; returns the seconds until the window ends when the attempt is over max_attempts, else 0.';
revoke all on function app.count_login_attempt(text, text, integer, integer) from public, anon, authenticated;
