-- The security audit log: one row per security event of an account, written
-- in the same transaction (and round trip) as the change it records. Most
-- rows come from triggers on the tables that change, so no statement that
-- registers, signs in, changes a password or ends a session can forget one;
-- the events no table change shows (a login that failed or was refused by a
-- limit) are recorded by calling app.record_security_event in the statement
-- that decides them. No row ever holds a password, code, token or hash, nor
-- the account's email address.

create table app.security_events (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  type text not null check (type in (
    'registered', 'login_succeeded', 'login_failed', 'login_refused_by_limit', 'password_reset_requested',
    'password_set_with_code', 'password_changed', 'email_verified', 'session_started', 'session_ended',
    'refresh_token_reused', 'account_suspended', 'account_reactivated', 'role_granted', 'role_revoked',
    'account_deleted'
  )),
  -- No foreign key: an account's events outlive it (account_deleted is one of them) until pruned.
  user_id uuid not null,
  -- Who caused it: the account itself, an admin, or null for an operator working in SQL.
  actor_id uuid,
  address text check (char_length(address) <= 100),
  user_agent text check (char_length(user_agent) <= 512),
  -- Small and free of secrets by construction; the key check is a backstop against a careless caller.
  details jsonb not null default '{}' check (
    jsonb_typeof(details) = 'object'
    and octet_length(details::text) <= 2048
    and not details ?| array['password', 'code', 'token', 'hash', 'refresh_token', 'access_token', 'email']
  )
);
comment on table app.security_events is
  'Append-only security audit log, one row per event, kept AUDIT_RETENTION_DAYS and pruned by the mail drain. Never a secret or an email address.';
comment on column app.security_events.actor_id is
  'The user who caused the event: the account itself, an admin acting on it, or null for an operator in SQL.';
-- An account's events, newest first, and the pruning's oldest first.
create index security_events_user_id_idx on app.security_events (user_id, id desc);
create index security_events_at_idx on app.security_events (at);
revoke all on table app.security_events from public, anon, authenticated;

-- What a statement acting for someone else says about itself, for the triggers below: the admin's id,
-- address and user agent (set locally by the admin endpoints' opening statement), or nothing.
create function app.audit_setting(name text) returns text
language sql stable
set search_path = ''
as $$
  -- A local setting read after its transaction reads as '' rather than null.
  select nullif(current_setting('app.audit_' || name, true), '')
$$;
revoke all on function app.audit_setting(text) from public, anon, authenticated;

-- Records one event as given. The login statements call it for what no table change shows
-- (login_succeeded, login_failed, login_refused_by_limit); the triggers below call it for everything else.
create function app.record_security_event(
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
  values (
    event_type,
    subject,
    actor,
    left(client_address, 100),
    left(client_user_agent, 512),
    coalesce(event_details, '{}')
  )
$$;
comment on function app.record_security_event(text, uuid, uuid, text, text, jsonb) is
  'Appends one security event: its type, subject account, actor (null for an operator), client address, user agent and details.';
revoke all on function app.record_security_event(text, uuid, uuid, text, text, jsonb) from public, anon, authenticated;

-- An event of a change to an account's row: the client is the acting statement's (an admin's request),
-- when it says; the account's own requests set none, and their session_started event carries theirs.
create function app.record_account_event(event_type text, subject uuid, actor uuid, event_details jsonb)
returns void
language sql
security definer
set search_path = ''
as $$
  select app.record_security_event(
    event_type, subject, actor, app.audit_setting('address'), app.audit_setting('user_agent'), event_details
  )
$$;
revoke all on function app.record_account_event(text, uuid, uuid, jsonb) from public, anon, authenticated;

-- The actor of a change to `subject`'s account: the admin acting, else the account itself.
create function app.audit_actor_or(subject uuid) returns uuid
language sql stable
set search_path = ''
as $$
  select coalesce(app.audit_setting('actor')::uuid, subject)
$$;
revoke all on function app.audit_actor_or(uuid) from public, anon, authenticated;

-- A used reset code is deleted just before reset_password sets the password; the mark tells the users
-- trigger that this password was set with a code, not changed with the current one.
create function app.audit_reset_code_use() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform set_config('app.audit_cause', 'reset_code_used', true);
  return null;
end;
$$;
revoke all on function app.audit_reset_code_use() from public, anon, authenticated;

create trigger password_reset_codes_audit_use
after delete on app.password_reset_codes
for each row execute function app.audit_reset_code_use();

-- A code stored for a reset request: the request was for a known account, within its mail quota.
create function app.audit_reset_code_issue() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app.record_account_event('password_reset_requested', new.user_id, new.user_id, '{}');
  return null;
end;
$$;
revoke all on function app.audit_reset_code_issue() from public, anon, authenticated;

create trigger password_reset_codes_audit_issue
after insert or update of code_hash on app.password_reset_codes
for each row execute function app.audit_reset_code_issue();

create function app.audit_user_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform app.record_account_event('registered', new.id, app.audit_actor_or(new.id), '{}');
    return null;
  end if;
  if tg_op = 'DELETE' then
    perform app.record_account_event('account_deleted', old.id, app.audit_actor_or(old.id), '{}');
    return null;
  end if;
  if new.status is distinct from old.status then
    perform app.record_account_event(
      case new.status when 'SUSPENDED' then 'account_suspended' else 'account_reactivated' end,
      new.id, app.audit_actor_or(new.id), '{}'
    );
  end if;
  if new.role is distinct from old.role then
    -- Roles change only by an admin statement or an operator's SQL, never by the account itself.
    perform app.record_account_event(
      case new.role when 'ADMIN' then 'role_granted' else 'role_revoked' end,
      new.id, app.audit_setting('actor')::uuid, jsonb_build_object('role', new.role)
    );
  end if;
  if new.password_hash is distinct from old.password_hash then
    perform app.record_account_event(
      case when app.audit_setting('cause') = 'reset_code_used' then 'password_set_with_code'
           else 'password_changed' end,
      new.id, app.audit_actor_or(new.id), '{}'
    );
  end if;
  if new.is_verified and not old.is_verified then
    perform app.record_account_event('email_verified', new.id, app.audit_actor_or(new.id), '{}');
  end if;
  return null;
end;
$$;
revoke all on function app.audit_user_change() from public, anon, authenticated;

create trigger users_audit
after insert or update or delete on app.users
for each row execute function app.audit_user_change();

-- A session starts with its device (user agent and address); it ends with the reason app.sessions keeps,
-- and a reused refresh token is its own event, naming the session it ended.
create function app.audit_session_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform app.record_security_event(
      'session_started', new.user_id, app.audit_actor_or(new.user_id), new.address, new.user_agent,
      jsonb_build_object('sessionId', new.id)
    );
  elsif new.revoked_at is not null and old.revoked_at is null then
    perform app.record_security_event(
      case new.revoked_reason when 'refresh_token_reused' then 'refresh_token_reused' else 'session_ended' end,
      new.user_id, app.audit_actor_or(new.user_id), new.address, new.user_agent,
      jsonb_build_object('sessionId', new.id, 'reason', new.revoked_reason)
    );
  end if;
  return null;
end;
$$;
revoke all on function app.audit_session_change() from public, anon, authenticated;

create trigger sessions_audit
after insert or update of revoked_at on app.sessions
for each row execute function app.audit_session_change();

-- Append-only: no statement of the functions' role (nor any other) may rewrite or remove an event, save
-- the pruning below of events older than a day. Triggers rather than privileges, because the functions
-- connect as the role that owns the table, and on plain PostgreSQL as a superuser.
create function app.refuse_security_event_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'DELETE' and app.audit_setting('pruning') = 'on' and old.at <= now() - interval '1 day' then
    return old;
  end if;
  raise exception 'security events are append-only' using errcode = 'insufficient_privilege';
end;
$$;
revoke all on function app.refuse_security_event_change() from public, anon, authenticated;

create trigger security_events_append_only
before update or delete on app.security_events
for each row execute function app.refuse_security_event_change();

create trigger security_events_no_truncate
before truncate on app.security_events
for each statement execute function app.refuse_security_event_change();

-- Deletes up to `batch` events older than `retention_days` (at least 1), oldest first; called by the
-- mail drain, the service's one schedule. Answers how many it deleted.
create function app.prune_security_events(retention_days integer, batch integer) returns integer
language plpgsql
set search_path = ''
as $$
declare
  pruned integer;
begin
  if retention_days < 1 then
    raise exception 'security events are kept at least a day' using errcode = 'invalid_parameter_value';
  end if;
  perform set_config('app.audit_pruning', 'on', true);
  delete from app.security_events e
  where e.id in (
    select o.id from app.security_events o
    where o.at <= now() - make_interval(days => retention_days)
    order by o.at
    limit batch
    for update skip locked
  );
  get diagnostics pruned = row_count;
  perform set_config('app.audit_pruning', '', true);
  return pruned;
end;
$$;
comment on function app.prune_security_events(integer, integer) is
  'Deletes up to batch security events older than retention_days (at least 1), oldest first; answers how many.';
revoke all on function app.prune_security_events(integer, integer) from public, anon, authenticated;
