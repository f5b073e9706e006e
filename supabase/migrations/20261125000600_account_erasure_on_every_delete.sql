-- Whoever deletes an account's row (delete-account, or the database owner in SQL), the rows that name its address
-- or id without a foreign key go with it: its rate-limit counts and its queued or sent mails were deleted only by
-- app.delete_account, so an operator's delete left the address in app.rate_limits and app.mail_outbox.

create or replace function app.erase_deleted_accounts() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from public.note_tombstones t using deleted_users d where t.created_by = d.id;
  delete from app.rate_limits r using deleted_users d where r.email = d.email or r.key = d.id::text;
  delete from app.mail_outbox m using deleted_users d where m.recipient = d.email;
  update app.security_events e
  set address = null, user_agent = null, details = '{}'
  from deleted_users d
  where e.user_id = d.id and (e.address is not null or e.user_agent is not null or e.details <> '{}');
  -- Events of other accounts that it caused as an admin keep what they say, without its address or user agent.
  update app.security_events e
  set address = null, user_agent = null
  from deleted_users d
  where e.actor_id = d.id and e.actor_id <> e.user_id and (e.address is not null or e.user_agent is not null);
  return null;
end;
$$;
comment on function app.erase_deleted_accounts() is
  'Erases deleted accounts: their tombstones, rate-limit counts and mails, and the addresses, user agents and details the security log held of them.';

-- The erasing is the trigger's now, for every delete: this deletes the row while the hash is the one checked.
create or replace function app.delete_account(owner uuid, expected_hash text) returns boolean
language sql
set search_path = ''
as $$
  with deleted as (
    delete from app.users u where u.id = owner and u.password_hash = expected_hash returning 1
  )
  select exists (select from deleted)
$$;
