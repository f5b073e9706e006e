-- Deleting an account leaves only its id, in the security log. Its notes' tombstones (public.note_tombstones, no
-- foreign key to the owner) stayed NOTES_TOMBSTONE_DAYS with the id, and its security events kept the addresses and
-- user agents of its devices AUDIT_RETENTION_DAYS. Both now go in the statement that deletes the account, by a
-- trigger on app.users, so delete-account and an operator's `delete from app.users` erase alike.

-- The log's events caused by an account acting on others (an admin's), found without a scan of the whole log.
create index security_events_other_actor_idx on app.security_events (actor_id) where actor_id <> user_id;

-- Append-only still, save two exceptions: the pruning of old events, and erasing a deleted account from the events
-- it underwent or caused. Erasing takes their client (address and user agent) and, from its own events, the details;
-- what happened, when, to which id and by whom stays. Nothing else may change, and only once the account is gone.
create or replace function app.refuse_security_event_change() returns trigger
language plpgsql
set search_path = ''
as $$
declare
  subject_gone boolean;
begin
  if tg_op = 'DELETE' and app.audit_setting('pruning') = 'on' and old.at <= now() - interval '1 day' then
    return old;
  end if;
  if tg_op = 'UPDATE'
     and (new.id, new.at, new.type, new.user_id, new.actor_id)
         is not distinct from (old.id, old.at, old.type, old.user_id, old.actor_id)
     and new.address is null and new.user_agent is null then
    subject_gone := not exists (select from app.users u where u.id = old.user_id);
    if (subject_gone and (new.details = old.details or new.details = '{}'))
       or (new.details = old.details
           and old.actor_id is not null and not exists (select from app.users u where u.id = old.actor_id)) then
      return new;
    end if;
  end if;
  raise exception 'security events are append-only' using errcode = 'insufficient_privilege';
end;
$$;

-- After every row trigger of the delete (the account_deleted event included), once per statement. Security definer
-- because public.note_tombstones forces row-level security, as app.prune_note_tombstones does.
create function app.erase_deleted_accounts() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from public.note_tombstones t using deleted_users d where t.created_by = d.id;
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
  'Erases deleted accounts: their tombstones, and the addresses, user agents and details the security log held of them.';
revoke all on function app.erase_deleted_accounts() from public, anon, authenticated;

create trigger users_erase_deleted
after delete on app.users
referencing old table as deleted_users
for each statement execute function app.erase_deleted_accounts();

comment on table app.security_events is
  'Append-only security audit log, one row per event, kept AUDIT_RETENTION_DAYS and pruned by the mail drain. Never a secret or an email address; a deleted account keeps only its id here (app.erase_deleted_accounts).';
