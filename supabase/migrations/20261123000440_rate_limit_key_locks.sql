-- A rate limit is checked and counted in one statement, under a lock that makes concurrent hits of one key
-- see each other. The lock was the counter row's, and a key's first hits find no row to lock: each of a burst
-- at a fresh (email, address) pair could pass the check before the first insert committed (twelve concurrent
-- guesses let six through a limit of five). A transaction-scoped advisory lock per (bucket, key) exists
-- before its row does, so it serialises first hits too, and it ends with the transaction.

-- Locks each 'bucket key' given (nulls skipped: a key without a client address is not limited), in hash
-- order so two transactions locking overlapping keys cannot deadlock.
create function app.lock_rate_limit_keys(variadic bucket_keys text[]) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pg_advisory_xact_lock(lock_key)
  from (
    select distinct hashtextextended(bucket_key, 0) as lock_key
    from unnest(bucket_keys) as bucket_key
    where bucket_key is not null
    order by 1
  ) ordered;
end;
$$;
revoke all on function app.lock_rate_limit_keys(text[]) from public, anon, authenticated;

create or replace function app.take_rate_limit(
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
  perform app.lock_rate_limit_keys(limit_bucket || ' ' || limit_key);
  wait := app.rate_limit_wait(limit_bucket, limit_key, max_hits);
  if wait = 0 then
    perform app.count_rate_limit_hit(limit_bucket, limit_key, window_seconds);
  end if;
  return wait;
end;
$$;
