-- Sign-in with OpenID Connect providers. An identity is a provider's (issuer, subject) and belongs to one account; it is
-- never joined to an account by email: a new identity whose email an account holds links nothing (the owner links it
-- from a signed-in session). An account made by a provider has no password until its owner sets one with a reset
-- code; it signs in with its identities, and a fresh provider sign-in (10 minutes) stands in for the password where
-- one is re-entered (a password change, the account's deletion).
--
-- A sign-in runs in three steps, each single use: the flow (state, PKCE verifier, nonce, where to return; 10 minutes)
-- that the callback consumes before it spends the provider's code; then the one-time code (60 seconds) that the
-- callback hands the app in the URL; then the session that the code is exchanged for. No token travels in a URL.

alter table app.users alter column password_hash drop not null;
comment on column app.users.password_hash is
  'bcrypt hash from the functions; null for an account made by a provider sign-in until its owner sets a password.';

-- How and when the sign-in behind a session was made: a successor session (the second step, a password change)
-- keeps its predecessor's, so "signed in within 10 minutes" means what the user did, not what the server rotated.
alter table app.sessions
  add column signed_in_with text not null default 'password' check (signed_in_with in ('password', 'provider')),
  add column signed_in_at timestamptz;
update app.sessions set signed_in_at = created_at;
alter table app.sessions alter column signed_in_at set not null, alter column signed_in_at set default now();

create table app.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  -- The configured name (OIDC_PROVIDERS) the identity was made through, for the user's list.
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{0,31}$'),
  issuer text not null check (char_length(issuer) between 1 and 500),
  subject text not null check (char_length(subject) between 1 and 255),
  -- The address the provider stated at the last sign-in: shown to the owner, never used to find an account.
  email text check (char_length(email) <= 320),
  -- Whether the account's address was proven when the identity joined it: a provider that vouched for it made the
  -- account, or the account was verified when its owner linked the identity. Never changed afterwards, whatever the
  -- provider says at later sign-ins: a reset code, which proves the address, drops the identities without it.
  trusted boolean not null default false,
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz,
  unique (issuer, subject)
);
comment on table app.identities is
  'Provider identities, keyed by (issuer, subject), each of one account; never matched to an account by email.';
create index identities_user_id_idx on app.identities (user_id);
revoke all on table app.identities from public, anon, authenticated;

create table app.oauth_flows (
  -- HMAC-SHA256 of the state under a server key (hex): the state itself is only ever in the browser's URL.
  state_hash text primary key check (state_hash ~ '^[0-9a-f]{64}$'),
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{0,31}$'),
  code_verifier text not null check (char_length(code_verifier) between 43 and 128),
  nonce text not null check (char_length(nonce) between 1 and 128),
  redirect_to text not null check (char_length(redirect_to) <= 2000),
  -- A link (POST /auth/identities/link): the account, and the session that asked, which must still be live.
  link_user_id uuid references app.users (id) on delete cascade,
  link_session_id uuid,
  -- The app's PKCE challenge (S256 of a verifier the app keeps): the one-time code then works only with that verifier,
  -- so a code or callback URL an attacker hands someone else's browser signs nobody in (login CSRF).
  app_code_challenge text check (app_code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  expires_at timestamptz not null,
  check ((link_user_id is null) = (link_session_id is null))
);
comment on table app.oauth_flows is
  'Provider sign-ins and links under way: consumed (deleted) by their callback, or pruned once expired.';
create index oauth_flows_expires_at_idx on app.oauth_flows (expires_at);
revoke all on table app.oauth_flows from public, anon, authenticated;

create table app.oauth_codes (
  -- HMAC-SHA256 of the one-time code under a server key (hex): a copy of the table yields no code.
  code_hash text primary key check (code_hash ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references app.users (id) on delete cascade,
  identity_id uuid not null references app.identities (id) on delete cascade,
  -- The flow's app_code_challenge: the exchange must present its verifier, or none when this is null.
  app_code_challenge text check (app_code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  expires_at timestamptz not null
);
create table app.identity_link_codes (
  -- HMAC-SHA256 of the one-time code under a server key (hex).
  code_hash text primary key check (code_hash ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references app.users (id) on delete cascade,
  -- Only this session completes the link: an attacker's link URL opened in someone else's browser links nothing.
  session_id uuid not null,
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{0,31}$'),
  issuer text not null check (char_length(issuer) between 1 and 500),
  subject text not null check (char_length(subject) between 1 and 255),
  email text check (char_length(email) <= 320),
  expires_at timestamptz not null
);
comment on table app.identity_link_codes is
  'Provider identities waiting for the session that asked to link them (POST /auth/identities/link/complete).';
create index identity_link_codes_expires_at_idx on app.identity_link_codes (expires_at);
revoke all on table app.identity_link_codes from public, anon, authenticated;

comment on table app.oauth_codes is
  'One-time codes of completed provider sign-ins, exchanged once for a session by POST /auth/oauth/token.';
create index oauth_codes_expires_at_idx on app.oauth_codes (expires_at);
revoke all on table app.oauth_codes from public, anon, authenticated;

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'login-account', 'login-device', 'signup-address', 'reset-address',
  'reset-code-account', 'reset-request-address', 'refresh-address', 'verify-address', 'reentry-session',
  'oauth-address'
));

alter table app.security_events drop constraint security_events_type_check;
alter table app.security_events add constraint security_events_type_check check (type in (
  'registered', 'login_succeeded', 'login_failed', 'login_refused_by_limit', 'password_reset_requested',
  'password_set_with_code', 'password_changed', 'email_verified', 'session_started', 'session_ended',
  'refresh_token_reused', 'account_suspended', 'account_reactivated', 'role_granted', 'role_revoked',
  'account_deleted', 'second_factor_added', 'second_factor_removed', 'second_factor_failed', 'second_factor_locked',
  'recovery_code_used', 'recovery_codes_replaced', 'identity_linked', 'identity_unlinked'
));

-- How long a sign-in counts as fresh: a link without the password, and a provider sign-in in place of the password.
create function app.fresh_sign_in() returns interval
language sql immutable
set search_path = ''
as $$ select interval '10 minutes' $$;
revoke all on function app.fresh_sign_in() from public, anon, authenticated;

-- Whether the JWT caller's session was signed in within app.fresh_sign_in(), by a provider when `by_provider`.
create function app.caller_signed_in_freshly(by_provider boolean) returns boolean
language sql stable
set search_path = ''
as $$
  select exists (
    select from app.sessions s
    where s.id = (select app.claimed_session_id()) and s.user_id = (select auth.uid())
      and s.signed_in_at > now() - app.fresh_sign_in()
      and (not by_provider or s.signed_in_with = 'provider')
  )
$$;
revoke all on function app.caller_signed_in_freshly(boolean) from public, anon, authenticated;

-- Sessions record how the sign-in was made: `signed_in_with` when this is a sign-in, else `inherit_from`'s.
drop function app.start_session(uuid, integer, integer, text, text, text, uuid);
create function app.start_session(
  owner uuid,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text,
  verified_with text default null,
  inherit_from uuid default null,
  signed_in_with text default null
) returns table (
  session_id uuid,
  session_generation integer,
  device_generation integer,
  session_aal text,
  session_started_at timestamptz,
  second_factor text,
  second_factor_at timestamptz,
  factor_id uuid,
  factor_sealed text,
  factor_key_id text
)
language plpgsql
set search_path = ''
as $$
declare
  inherited app.sessions%rowtype;
  started app.sessions%rowtype;
begin
  delete from app.sessions s
  where s.user_id = owner
    and (s.revoked_at <= now() - interval '1 day' or s.expires_at <= now() - interval '1 day');
  -- The caller's session, which the statement calling this may have just ended (a password change ends them all).
  select * into inherited from app.sessions s where s.id = inherit_from and s.user_id = owner;
  insert into app.sessions (
    user_id, expires_at, user_agent, address, aal, second_factor, second_factor_at, signed_in_with, signed_in_at
  )
  values (
    owner,
    now() + make_interval(secs => least(idle_seconds, max_lifetime_seconds)),
    left(client_user_agent, 256),
    left(client_address, 100),
    case when verified_with is not null then 'aal2' else coalesce(inherited.aal, 'aal1') end,
    coalesce(verified_with, inherited.second_factor),
    case when verified_with is not null then now() else inherited.second_factor_at end,
    coalesce(start_session.signed_in_with, inherited.signed_in_with, 'password'),
    case when start_session.signed_in_with is not null then now() else coalesce(inherited.signed_in_at, now()) end
  )
  returning * into started;
  return query
    select started.id, started.generation, u.device_generation, l.*
    from app.users u cross join lateral app.session_level(started.id) l
    where u.id = owner;
end;
$$;
comment on function app.start_session(uuid, integer, integer, text, text, text, uuid, text) is
  'Starts a session for the user at aal1, at aal2 when verified_with names the second step, or at the level and sign-in of inherit_from; signed_in_with marks a sign-in; prunes the user''s ended sessions; returns the session, the device generation and app.session_level.';
revoke all on function app.start_session(uuid, integer, integer, text, text, text, uuid, text)
  from public, anon, authenticated;

-- The aal2 successor of a session keeps the sign-in the session was made by.
create or replace function app.start_second_level_session(
  owner uuid,
  attempt_outcome text,
  verified_with text,
  ended_session uuid,
  ended_reason text,
  idle_seconds integer,
  max_lifetime_seconds integer,
  client_user_agent text,
  client_address text
) returns app.second_step
language plpgsql
set search_path = ''
as $$
declare
  result app.second_step;
begin
  update app.sessions s set revoked_at = now(), revoked_reason = ended_reason
  where s.user_id = owner and s.revoked_at is null and s.expires_at > now()
    and (ended_session is null or s.id = ended_session);
  select attempt_outcome, null, (select count(*)::integer from app.recovery_codes r where r.user_id = owner), s.*
  into result
  from app.start_session(owner, idle_seconds, max_lifetime_seconds, client_user_agent, client_address,
                         verified_with, ended_session) s;
  return result;
end;
$$;

-- A password change needs the password checked against expected_hash, or (expected_hash null) a fresh provider
-- sign-in of the caller's session: Postgres holds the rule, whatever the function passes.
create or replace function app.change_password(owner uuid, expected_hash text, new_hash text)
returns table (
  outcome text,
  id uuid,
  name text,
  phone_number text,
  email text,
  role text,
  status text,
  is_verified boolean,
  created_at timestamptz,
  updated_at timestamptz,
  token_version integer
)
language plpgsql
set search_path = ''
as $$
begin
  return query
    update app.users u set password_hash = new_hash
    where u.id = owner
      and (u.password_hash = expected_hash or (expected_hash is null and app.caller_signed_in_freshly(true)))
    returning 'changed', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
  if not found then
    return query select 'stale', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
  end if;
end;
$$;

-- The same for the account's deletion.
create or replace function app.delete_account(owner uuid, expected_hash text) returns boolean
language sql
set search_path = ''
as $$
  with deleted as (
    delete from app.users u
    where u.id = owner
      and (u.password_hash = expected_hash or (expected_hash is null and app.caller_signed_in_freshly(true)))
    returning 1
  )
  select exists (select from deleted)
$$;

-- Starts a provider sign-in or link: counts it against the address's limit and, when allowed, stores the flow,
-- pruning expired flows and codes as it goes. A link is stored only for a caller whose session signed in freshly
-- or whose password was checked against `link_password_hash` (still the account's). Answers the seconds to wait
-- (0 when stored), and for a link whether it was allowed.
create function app.start_oauth_flow(
  state_hash text,
  flow_provider text,
  code_verifier text,
  nonce text,
  redirect_to text,
  client_address text,
  window_seconds integer,
  max_attempts integer,
  link_user uuid default null,
  link_session uuid default null,
  link_password_hash text default null,
  app_code_challenge text default null
) returns table (retry_after integer, link_allowed boolean)
language plpgsql
set search_path = ''
as $$
declare
  wait integer := 0;
begin
  if link_user is not null and not (
    app.caller_signed_in_freshly(false)
    or exists (select from app.users u where u.id = link_user and u.password_hash = link_password_hash)
  ) then
    return query select 0, false;
    return;
  end if;
  wait := app.take_rate_limit('oauth-address', client_address, window_seconds, max_attempts);
  if wait > 0 then
    return query select wait, link_user is not null;
    return;
  end if;
  delete from app.oauth_flows f where f.ctid in (
    select f2.ctid from app.oauth_flows f2 where f2.expires_at <= now() limit 100
  );
  delete from app.oauth_codes c where c.ctid in (
    select c2.ctid from app.oauth_codes c2 where c2.expires_at <= now() limit 100
  );
  delete from app.identity_link_codes c where c.ctid in (
    select c2.ctid from app.identity_link_codes c2 where c2.expires_at <= now() limit 100
  );
  insert into app.oauth_flows (state_hash, provider, code_verifier, nonce, redirect_to, link_user_id,
                               link_session_id, app_code_challenge, expires_at)
  values (start_oauth_flow.state_hash, flow_provider, start_oauth_flow.code_verifier, start_oauth_flow.nonce,
          start_oauth_flow.redirect_to, link_user, link_session, start_oauth_flow.app_code_challenge,
          now() + interval '10 minutes');
  return query select 0, link_user is not null;
end;
$$;
comment on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text) is
  'Stores a provider sign-in or link (the caller signed in freshly or re-entered the password), rate-limited per address, for 10 minutes.';
revoke all on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text)
  from public, anon, authenticated;

-- What a provider's callback concluded: 'signed_in' or 'registered' with a one-time code stored, 'link_pending' with
-- a link code stored for the asking session, 'linked' (it already was), or the
-- reason nothing happened ('identity_not_linked', 'email_required', 'identity_already_linked', 'account_suspended', 'link_expired').
-- A known identity signs into its account whatever its email is now; a new one makes an account only when no
-- account holds its email; a link waits for the session that asked, which must still be live. Serialised per
-- (issuer, subject), so two callbacks of one new identity make one account.
create function app.complete_oauth_flow(
  flow_provider text,
  flow_issuer text,
  flow_subject text,
  claimed_email text,
  claimed_email_verified boolean,
  claimed_name text,
  link_user uuid,
  link_session uuid,
  code_hash text,
  code_seconds integer,
  client_address text,
  client_user_agent text,
  app_code_challenge text
) returns table (outcome text, user_id uuid)
language plpgsql
set search_path = ''
as $$
declare
  found_identity app.identities%rowtype;
  account app.users%rowtype;
begin
  perform pg_advisory_xact_lock(hashtextextended(flow_issuer || ' ' || flow_subject, 0));
  select * into found_identity from app.identities i where i.issuer = flow_issuer and i.subject = flow_subject;

  if link_user is not null then
    select u.* into account from app.users u
    join app.sessions s on s.user_id = u.id
    where u.id = link_user and u.status = 'ACTIVE' and s.id = link_session and s.revoked_at is null
      and s.expires_at > now();
    if not found then
      return query select 'link_expired', link_user;
      return;
    end if;
    if found_identity.id is not null then
      return query select case when found_identity.user_id = link_user then 'linked' else 'identity_already_linked' end,
                          link_user;
      return;
    end if;
    -- Linked only once the asking session presents this code (app.complete_identity_link).
    insert into app.identity_link_codes (code_hash, user_id, session_id, provider, issuer, subject, email, expires_at)
    values (complete_oauth_flow.code_hash, link_user, link_session, flow_provider, flow_issuer, flow_subject,
            claimed_email, now() + make_interval(secs => code_seconds));
    return query select 'link_pending', link_user;
    return;
  end if;

  if found_identity.id is not null then
    select * into account from app.users u where u.id = found_identity.user_id;
    if account.status <> 'ACTIVE' then
      return query select 'account_suspended', account.id;
      return;
    end if;
    update app.identities i set email = claimed_email where i.id = found_identity.id;
    insert into app.oauth_codes (code_hash, user_id, identity_id, app_code_challenge, expires_at)
    values (complete_oauth_flow.code_hash, account.id, found_identity.id, complete_oauth_flow.app_code_challenge,
            now() + make_interval(secs => code_seconds));
    return query select 'signed_in', account.id;
    return;
  end if;

  if claimed_email is null then
    return query select 'email_required', null::uuid;
    return;
  end if;
  if exists (select from app.users u where u.email = claimed_email) then
    return query select 'identity_not_linked', null::uuid;
    return;
  end if;
  begin
    insert into app.users (name, email, password_hash, is_verified)
    values (claimed_name, claimed_email, null, claimed_email_verified)
    returning * into account;
  exception when unique_violation then
    -- A registration with the same address committed meanwhile: it is that account's, and nothing links to it.
    return query select 'identity_not_linked', null::uuid;
    return;
  end;
  insert into app.identities (user_id, provider, issuer, subject, email, trusted)
  values (account.id, flow_provider, flow_issuer, flow_subject, claimed_email, claimed_email_verified)
  returning * into found_identity;
  -- The insert's trigger logged the registration; this says through which identity.
  perform app.record_security_event('identity_linked', account.id, account.id, client_address, client_user_agent,
    jsonb_build_object('provider', flow_provider, 'identityId', found_identity.id));
  insert into app.oauth_codes (code_hash, user_id, identity_id, app_code_challenge, expires_at)
  values (complete_oauth_flow.code_hash, account.id, found_identity.id, complete_oauth_flow.app_code_challenge,
          now() + make_interval(secs => code_seconds));
  return query select 'registered', account.id;
end;
$$;
comment on function app.complete_oauth_flow(text, text, text, text, boolean, text, uuid, uuid, text, integer, text, text, text) is
  'Concludes a provider callback: signs a known identity in, makes an account for a new one whose email no account holds, or links it to a live session''s account; never matches by email.';
revoke all on function app.complete_oauth_flow(text, text, text, text, boolean, text, uuid, uuid, text, integer, text, text, text)
  from public, anon, authenticated;

-- Unlinks the caller's identity unless it is the account's last way to sign in (no password, no other identity).
-- Answers 'unlinked', 'last_sign_in_method' or 'not_found'.
create function app.unlink_identity(owner uuid, target_identity uuid, client_address text, client_user_agent text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  removed app.identities%rowtype;
begin
  -- Locked, so two unlinks of an account's last two identities cannot both see the other one left.
  select * into account from app.users u where u.id = owner for update;
  if not exists (select from app.identities i where i.id = target_identity and i.user_id = owner) then
    return 'not_found';
  end if;
  if account.password_hash is null
     and not exists (select from app.identities i where i.user_id = owner and i.id <> target_identity) then
    return 'last_sign_in_method';
  end if;
  delete from app.identities i where i.id = target_identity and i.user_id = owner returning * into removed;
  perform app.record_security_event('identity_unlinked', owner, owner, client_address, client_user_agent,
    jsonb_build_object('provider', removed.provider, 'identityId', removed.id));
  return 'unlinked';
end;
$$;
comment on function app.unlink_identity(uuid, uuid, text, text) is
  'Unlinks an identity of the account unless no password and no other identity would be left.';
revoke all on function app.unlink_identity(uuid, uuid, text, text) from public, anon, authenticated;

-- Provider pre-hijacking: someone signs up through a provider that does not vouch for the address (email_verified
-- false) with another person's address, links more identities of their own, and waits for that person to take the
-- account over with a reset code. The reset code proves the address, so setting a password with it drops every
-- identity that joined the account while its address was unproven (app.identities.trusted).
create function app.drop_unproven_identities() returns trigger
language plpgsql
set search_path = ''
as $$
declare
  dropped app.identities%rowtype;
begin
  for dropped in
    delete from app.identities i where i.user_id = new.user_id and not i.trusted returning *
  loop
    perform app.record_security_event('identity_unlinked', dropped.user_id, null, new.address, new.user_agent,
      jsonb_build_object('provider', dropped.provider, 'identityId', dropped.id, 'reason', 'password_set_with_code'));
  end loop;
  return null;
end;
$$;
revoke all on function app.drop_unproven_identities() from public, anon, authenticated;
create trigger security_events_reset_drops_unproven_identities
after insert on app.security_events
for each row when (new.type = 'password_set_with_code')
execute function app.drop_unproven_identities();

-- Completes a link: the code the callback handed the app, presented by the session that asked for the link (any
-- other session, or a code past its time, gets 'invalid_code'). Links the identity unless another account has it
-- meanwhile, records it and mails the owner. Answers the outcome and the identity. The account's proof of its
-- address at this moment is the identity's trust (app.identities.trusted).
create function app.complete_identity_link(
  presented_hash text,
  owner uuid,
  caller_session uuid,
  client_address text,
  client_user_agent text,
  mail_subject text,
  mail_body text
) returns table (
  outcome text,
  identity_id uuid,
  provider text,
  email text,
  created_at timestamptz,
  last_sign_in_at timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  pending app.identity_link_codes%rowtype;
  found_identity app.identities%rowtype;
  account app.users%rowtype;
begin
  delete from app.identity_link_codes c where c.code_hash = presented_hash returning * into pending;
  if pending.code_hash is null or pending.expires_at <= now() or pending.user_id <> owner
     or pending.session_id <> caller_session then
    return query select 'invalid_code', null::uuid, null, null, null::timestamptz, null::timestamptz;
    return;
  end if;
  perform pg_advisory_xact_lock(hashtextextended(pending.issuer || ' ' || pending.subject, 0));
  select * into found_identity from app.identities i where i.issuer = pending.issuer and i.subject = pending.subject;
  if found_identity.id is not null then
    return query select case when found_identity.user_id = owner then 'linked' else 'identity_already_linked' end,
                        found_identity.id, found_identity.provider, found_identity.email, found_identity.created_at,
                        found_identity.last_sign_in_at;
    return;
  end if;
  select * into account from app.users u where u.id = owner;
  insert into app.identities (user_id, provider, issuer, subject, email, trusted, last_sign_in_at)
  values (owner, pending.provider, pending.issuer, pending.subject, pending.email, account.is_verified, now())
  returning * into found_identity;
  perform app.record_security_event('identity_linked', owner, owner, client_address, client_user_agent,
    jsonb_build_object('provider', pending.provider, 'identityId', found_identity.id));
  insert into app.mail_outbox (recipient, subject, body) values (account.email, mail_subject, mail_body);
  return query select 'linked', found_identity.id, found_identity.provider, found_identity.email,
                      found_identity.created_at, found_identity.last_sign_in_at;
end;
$$;
comment on function app.complete_identity_link(text, uuid, uuid, text, text, text, text) is
  'Links the identity a link code names, for the session that asked for the link only.';
revoke all on function app.complete_identity_link(text, uuid, uuid, text, text, text, text)
  from public, anon, authenticated;
