-- Device tokens end. A device token lets a login through the account's cap of failures; until now it held
-- for a year whatever happened to the account. Each account now has a device generation, carried by every
-- device token it issues: a password change, a reset, a suspension and a global sign-out raise it, and a
-- token of an older generation is no device at all (app.take_login_attempt compares them).

alter table app.users add column device_generation integer not null default 0;
comment on column app.users.device_generation is
  'Device tokens carry this and let a login through the account''s cap only while it matches. Raised on a password change or reset, a suspension and a global sign-out.';

-- As before (token_version on a new password or a suspension), and the device generation with it.
create or replace function app.revoke_tokens_on_credential_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.password_hash is distinct from old.password_hash
     or (new.status = 'SUSPENDED' and old.status is distinct from 'SUSPENDED') then
    new.token_version := old.token_version + 1;
    new.device_generation := old.device_generation + 1;
  end if;
  return new;
end;
$$;

-- Every sign-in starts its session here, so here it also learns the generation its device token carries. A
-- volatile SQL function reads with a fresh snapshot per statement: after a password change or reset earlier in
-- the same statement, it reads the raised generation. User agents are kept to 256 characters now.
drop function app.start_session(uuid, integer, integer, text, text);
create function app.start_session(
  owner uuid,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns table (session_id uuid, session_generation integer, device_generation integer)
language sql
set search_path = ''
as $$
  delete from app.sessions s
  where s.user_id = owner
    and (s.revoked_at <= now() - interval '1 day' or s.expires_at <= now() - interval '1 day');
  insert into app.sessions (user_id, expires_at, user_agent, address)
  values (
    owner,
    now() + make_interval(secs => least(idle_seconds, max_lifetime_seconds)),
    left(client_user_agent, 256),
    left(client_address, 100)
  )
  returning id, generation, (select u.device_generation from app.users u where u.id = owner);
$$;
comment on function app.start_session(uuid, integer, integer, text, text) is
  'Starts a session for the user and prunes the user''s ended sessions; returns its id, its generation (0) and the account''s device generation.';
revoke all on function app.start_session(uuid, integer, integer, text, text) from public, anon, authenticated;
