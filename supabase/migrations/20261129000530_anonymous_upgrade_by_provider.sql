-- An anonymous account signs up with a provider (issue 48): the identity link flow, run by the anonymous session,
-- makes it a real account with that identity, under the same id, so every note stays.
--
-- 1. POST /auth/identities/link needs no password or proof from an anonymous session (app.start_oauth_flow): it has
--    no credential to prove, and its session is what any upgrade of it rests on.
-- 2. The callback (app.complete_oauth_flow) refuses, for an anonymous account, an identity without an address
--    ('email_required') or whose address has an account ('identity_not_linked': sign in there and merge instead),
--    and keeps the identity's verification and name with the link code.
-- 3. The link's completion (app.complete_identity_link) gives the account the identity's address and name, verified
--    as the provider said, clears is_anonymous, and links the identity; an address registered since the callback is
--    'email_taken' and nothing changes (the code is spent; the account stays anonymous with its notes). No password
--    changes, so no session ends: the anonymous session goes on as the real account.

alter table app.identity_link_codes
  add column email_verified boolean not null default false,
  add column name text check (char_length(name) between 1 and 200);
comment on column app.identity_link_codes.email_verified is
  'Whether the provider said the identity''s address is verified: an anonymous account signing up by this link is verified as it says.';

create or replace function app.start_oauth_flow(
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
  app_code_challenge text default null,
  browser_hash text default null,
  reauthenticate boolean default false
) returns table (retry_after integer, link_allowed boolean)
language plpgsql
set search_path = ''
as $$
declare
  wait integer := 0;
begin
  -- A link needs a proof; a flow that is itself a proof needs only the session's account to have an identity there.
  if link_user is not null and not reauthenticate and not (
    app.caller_reauthenticated()
    or exists (select from app.users u where u.id = link_user and u.password_hash = link_password_hash)
    -- An anonymous account has no credential to prove: its session is all it has, and linking signs it up.
    or exists (select from app.users u where u.id = link_user and u.is_anonymous)
  ) then
    return query select 0, false;
    return;
  end if;
  if reauthenticate and not exists (
    select from app.identities i where i.user_id = link_user and i.provider = flow_provider
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
                               link_session_id, app_code_challenge, browser_hash, reauthenticate, expires_at)
  values (start_oauth_flow.state_hash, flow_provider, start_oauth_flow.code_verifier, start_oauth_flow.nonce,
          start_oauth_flow.redirect_to, link_user, link_session, start_oauth_flow.app_code_challenge,
          start_oauth_flow.browser_hash, start_oauth_flow.reauthenticate, now() + interval '10 minutes');
  return query select 0, link_user is not null;
end;
$$;
comment on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text, boolean) is
  'Stores a provider sign-in (bound to its browser, with the app''s PKCE challenge), a link (the caller re-entered the password, gave a proof within app.reauthentication_window(), or is an anonymous account) or a proof at a linked provider, rate-limited per address, for 10 minutes.';
revoke all on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text, boolean)
  from public, anon, authenticated;

create or replace function app.complete_oauth_flow(
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
    -- An anonymous account signs up by the link: it needs the identity's address, which no account may hold.
    if account.is_anonymous then
      if claimed_email is null then
        return query select 'email_required', link_user;
        return;
      end if;
      if exists (select from app.users u where u.email = claimed_email) then
        return query select 'identity_not_linked', link_user;
        return;
      end if;
    end if;
    -- Linked only once the asking session presents this code (app.complete_identity_link).
    insert into app.identity_link_codes (code_hash, user_id, session_id, provider, issuer, subject, email,
                                         email_verified, name, expires_at)
    values (complete_oauth_flow.code_hash, link_user, link_session, flow_provider, flow_issuer, flow_subject,
            claimed_email, claimed_email_verified, claimed_name, now() + make_interval(secs => code_seconds));
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

create or replace function app.complete_identity_link(
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
  select * into account from app.users u where u.id = owner for update;
  if account.is_anonymous then
    -- The link signs the anonymous account up under the same id: the identity's address and name, verified as the
    -- provider says. An address registered since the callback is the other account's, and nothing changes.
    begin
      update app.users u
      set email = pending.email, name = coalesce(pending.name, u.name), is_verified = pending.email_verified,
          is_anonymous = false, updated_at = now()
      where u.id = owner
      returning * into account;
    exception when unique_violation or check_violation then
      return query select 'email_taken', null::uuid, null, null, null::timestamptz, null::timestamptz;
      return;
    end;
  end if;
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
  'Links the identity a link code names, for the session that asked for the link only; an anonymous account''s link signs it up with the identity''s address and name.';
revoke all on function app.complete_identity_link(text, uuid, uuid, text, text, text, text)
  from public, anon, authenticated;
