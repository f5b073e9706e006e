-- Hardening: login throttling, reset-mail quotas and token revocation.
-- Edge functions share no memory between isolates, so every limit and every
-- revocation lives here, in Postgres, where all of them see the same state.

-- Login throttling: one fixed window per key, opened by the first attempt in it.
create table app.login_throttle (
  scope text not null check (scope in ('email', 'address')),
  key text not null,
  attempts integer not null check (attempts >= 0),
  window_started_at timestamptz not null,
  primary key (scope, key)
);
comment on table app.login_throttle is
  'Login attempts per email (cleared by a successful login) and per client address, each in a fixed window opened by its first attempt.';
comment on column app.login_throttle.attempts is
  'For scope email: attempts not followed by a successful login; for scope address: every attempt.';
revoke all on table app.login_throttle from public, anon, authenticated;

-- Reset mails: at most one per minimum interval and a fixed number per hour, per account.
create table app.reset_mail_quota (
  user_id uuid primary key references app.users (id) on delete cascade,
  last_sent_at timestamptz not null,
  window_started_at timestamptz not null,
  sent_in_window integer not null check (sent_in_window >= 0)
);
comment on table app.reset_mail_quota is
  'When the account was last sent a reset code and how many it was sent in the current hour, so requests cannot flood a mailbox.';
revoke all on table app.reset_mail_quota from public, anon, authenticated;

-- Revocation: every access token carries the version it was issued under; bumping it kills them all.
alter table app.users add column token_version integer not null default 0;
comment on column app.users.token_version is
  'Access tokens carry this as claim token_version (absent means 0) and are valid only while it matches. Raised on a password change and on suspension.';

-- A trigger rather than application code, so no path that changes a password or suspends a user can forget it.
create function app.revoke_tokens_on_credential_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.password_hash is distinct from old.password_hash
     or (new.status = 'SUSPENDED' and old.status is distinct from 'SUSPENDED') then
    new.token_version := old.token_version + 1;
  end if;
  return new;
end;
$$;
revoke all on function app.revoke_tokens_on_credential_change() from public;

create trigger users_revoke_tokens
before update on app.users
for each row execute function app.revoke_tokens_on_credential_change();

-- True when the caller of this transaction (request.jwt.claims) is an existing, ACTIVE
-- user whose token was issued under the current token_version. Security definer because
-- `authenticated` may not read app.users; search_path is empty so nothing can be shadowed.
create function app.caller_is_active() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select exists (
    select from app.users u,
      lateral (select nullif(current_setting('request.jwt.claims', true), '')::jsonb as claims) c
    where u.id = (select auth.uid())
      and u.status = 'ACTIVE'
      -- A token without the claim counts as version 0, as the functions read it.
      and jsonb_typeof(coalesce(c.claims -> 'token_version', '0')) = 'number'
      and u.token_version::numeric = coalesce(c.claims ->> 'token_version', '0')::numeric
  )
$$;
comment on function app.caller_is_active() is
  'Whether the JWT caller still exists, is ACTIVE and holds a token of the current token_version.';
revoke all on function app.caller_is_active() from public, anon;
grant execute on function app.caller_is_active() to authenticated;
-- The policies call it as `authenticated`, which needs to see the schema; its tables stay revoked.
grant usage on schema app to authenticated;

-- Raises SQLSTATE PT401 (PostgREST's code for a 401) unless the caller is active, so the
-- statement that opens a caller's transaction fails before any notes query runs.
create function app.require_active_caller() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not app.caller_is_active() then
    raise sqlstate 'PT401' using message = 'access token revoked or account inactive';
  end if;
end;
$$;
comment on function app.require_active_caller() is
  'Raises PT401 unless app.caller_is_active(); run when a caller''s transaction starts.';
revoke all on function app.require_active_caller() from public, anon;
grant execute on function app.require_active_caller() to authenticated;

-- The notes policies also require an active caller, so a revoked token reaches no note
-- even through the Data API, where the functions' own check does not run.
drop policy "owners read their notes" on public.notes;
drop policy "owners create their notes" on public.notes;
drop policy "owners change their notes" on public.notes;
drop policy "owners delete their notes" on public.notes;

create policy "active owners read their notes" on public.notes
  for select to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()));

create policy "active owners create their notes" on public.notes
  for insert to authenticated
  with check (created_by = (select auth.uid()) and (select app.caller_is_active()));

create policy "active owners change their notes" on public.notes
  for update to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()))
  with check (created_by = (select auth.uid()) and (select app.caller_is_active()));

create policy "active owners delete their notes" on public.notes
  for delete to authenticated
  using (created_by = (select auth.uid()) and (select app.caller_is_active()));
