-- Provider sign-in by the book (RFC 9700 "OAuth 2.0 Security Best Current Practice"):
--
-- * Every flow is bound to the browser that started it (4.7.1): the navigation that starts it sets a cookie on the
--   functions' origin, and the flow keeps only the cookie's HMAC (`browser_hash`). The callback spends the flow and
--   goes on only when the browser it arrived in holds that cookie, so a callback URL that reaches another browser
--   signs nobody in and links nothing. A link is started by an API call (POST /auth/identities/link), so its flow
--   is stored unbound and bound by the browser's navigation to /auth/identities/link/authorize, once.
-- * Every sign-in carries the app's PKCE challenge (2.1.1: mandatory for public clients), and its one-time code is
--   exchanged only with the verifier: a code without its verifier signs nobody in.
-- * The provider's return goes to a redirect URI of its own (4.4: mix-up), and a flow is spent only at the callback
--   of the provider it was started with: one provider's code never reaches another provider's token endpoint.
--
-- Flows under way (10 minutes) and codes not yet exchanged (60 seconds) were neither bound nor, for some, challenged:
-- they are dropped, and their sign-ins start again.

delete from app.oauth_flows;
delete from app.oauth_codes;

alter table app.oauth_flows
  -- HMAC-SHA256 (hex) of the random value of the cookie the starting navigation set; null only for a link whose
  -- browser has not yet come (app.bind_link_flow binds it once).
  add column browser_hash text check (browser_hash ~ '^[0-9a-f]{64}$'),
  -- A sign-in (no link) cannot be stored without the app's challenge, nor unbound.
  add constraint oauth_flows_sign_in_bound check (
    link_user_id is not null or (app_code_challenge is not null and browser_hash is not null)
  );
comment on column app.oauth_flows.browser_hash is
  'HMAC of the cookie set by the navigation that started the flow; the callback goes on only in a browser holding it.';

alter table app.oauth_codes alter column app_code_challenge set not null;
comment on column app.oauth_codes.app_code_challenge is
  'The flow''s app_code_challenge: the exchange must present its verifier.';

-- app.start_oauth_flow of 20261127000100_provider_identities.sql with the browser's binding stored beside the flow;
-- the link's rules (a fresh sign-in or the password) are unchanged.
drop function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text);
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
  app_code_challenge text default null,
  browser_hash text default null
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
                               link_session_id, app_code_challenge, browser_hash, expires_at)
  values (start_oauth_flow.state_hash, flow_provider, start_oauth_flow.code_verifier, start_oauth_flow.nonce,
          start_oauth_flow.redirect_to, link_user, link_session, start_oauth_flow.app_code_challenge,
          start_oauth_flow.browser_hash, now() + interval '10 minutes');
  return query select 0, link_user is not null;
end;
$$;
comment on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text) is
  'Stores a provider sign-in (bound to its browser, with the app''s PKCE challenge) or link (the caller signed in freshly or re-entered the password), rate-limited per address, for 10 minutes.';
revoke all on function app.start_oauth_flow(text, text, text, text, text, text, integer, integer, uuid, uuid, text, text, text)
  from public, anon, authenticated;

-- Binds a link's flow to the browser that navigates to it first, once, within its 10 minutes; answers what the
-- provider's authorization URL needs, or nothing for a flow unknown, spent, already bound or expired.
create function app.bind_link_flow(flow_state_hash text, flow_browser_hash text)
returns table (provider text, code_verifier text, nonce text)
language sql
set search_path = ''
as $$
  update app.oauth_flows f set browser_hash = flow_browser_hash
  where f.state_hash = flow_state_hash and f.link_user_id is not null and f.browser_hash is null
    and f.expires_at > now()
  returning f.provider, f.code_verifier, f.nonce
$$;
comment on function app.bind_link_flow(text, text) is
  'Binds a link''s flow to the browser that opens it first (its cookie''s HMAC), once.';
revoke all on function app.bind_link_flow(text, text) from public, anon, authenticated;

-- Spends the flow of a callback whatever it finds, and answers it only when the callback came to the redirect URI of
-- the flow's provider, in the browser the flow is bound to: a callback in another browser, or a provider's code
-- brought to another provider's callback (mix-up), goes no further, and nothing of the flow leaves.
create function app.consume_oauth_flow(flow_state_hash text, flow_browser_hash text, callback_provider text)
returns table (
  provider text,
  code_verifier text,
  nonce text,
  redirect_to text,
  link_user_id uuid,
  link_session_id uuid,
  app_code_challenge text,
  expired boolean
)
language sql
set search_path = ''
as $$
  with spent as (
    delete from app.oauth_flows f where f.state_hash = flow_state_hash returning f.*
  )
  select s.provider, s.code_verifier, s.nonce, s.redirect_to, s.link_user_id, s.link_session_id,
         s.app_code_challenge, s.expires_at <= now()
  from spent s
  where s.browser_hash = flow_browser_hash and s.provider = callback_provider
$$;
comment on function app.consume_oauth_flow(text, text, text) is
  'Spends a provider flow; answers it only at its provider''s callback, in the browser it is bound to.';
revoke all on function app.consume_oauth_flow(text, text, text) from public, anon, authenticated;
