-- Anonymous accounts left unused are deleted with their notes (issue 48). Unused: started more than the given days
-- ago, with no session of the account started or refreshed since. The service's one schedule, the mail drain
-- (mail-dispatch on hosted Supabase, the local stack's mail loop), calls this with ANONYMOUS_TTL_DAYS. Deleting the
-- row deletes the notes, sessions and counters with it (foreign keys), and erases what names the account
-- (users_erase_deleted); only anonymous rows are ever touched.

create function app.delete_unused_anonymous_accounts(ttl_days integer, batch integer) returns integer
language sql
security definer
set search_path = ''
as $$
  with unused as (
    select u.id from app.users u
    where u.is_anonymous
      and u.created_at < now() - make_interval(days => ttl_days)
      and not exists (
        select 1 from app.sessions s
        where s.user_id = u.id and s.refreshed_at >= now() - make_interval(days => ttl_days)
      )
    order by u.created_at
    limit batch
    for update of u skip locked
  ), deleted as (
    delete from app.users u using unused where u.id = unused.id and u.is_anonymous returning u.id
  )
  select count(*)::integer from deleted;
$$;
comment on function app.delete_unused_anonymous_accounts(integer, integer) is
  'Deletes up to batch anonymous accounts started over ttl_days ago whose sessions were neither started nor refreshed since, with their notes; answers how many.';
revoke all on function app.delete_unused_anonymous_accounts(integer, integer) from public, anon, authenticated;
