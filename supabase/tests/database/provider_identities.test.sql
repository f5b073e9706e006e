-- Provider identities as Postgres enforces them, whatever the functions pass: a new identity is never joined to an
-- account by its email; a known one signs into its own account; a link needs the asking session to be live; the
-- last way to sign in cannot be unlinked, and nothing is unlinked without a proof the session gave within 5 minutes;
-- a missing password stands in only for such a proof, never for a sign-in however fresh; a reset code drops
-- identities whose provider did not vouch for the address. The flow over HTTP, against
-- a real provider, is in tests/provider-sign-in.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(45);

insert into app.users (id, name, email, password_hash) values
  ('1d000000-0000-4000-8000-0000000000a1', 'Pat', 'pat-oidc@example.test', 'pat-hash'),
  ('1d000000-0000-4000-8000-0000000000a2', 'Quinn', 'quinn-oidc@example.test', null);
insert into app.sessions (id, user_id, expires_at, signed_in_with, signed_in_at) values
  ('1d000000-0000-4000-8000-0000000000b1', '1d000000-0000-4000-8000-0000000000a1', now() + interval '1 hour',
   'password', now()),
  ('1d000000-0000-4000-8000-0000000000b2', '1d000000-0000-4000-8000-0000000000a2', now() + interval '1 hour',
   'provider', now() - interval '11 minutes'),
  ('1d000000-0000-4000-8000-0000000000b3', '1d000000-0000-4000-8000-0000000000a2', now() + interval '1 hour',
   'provider', now());
insert into app.identities (id, user_id, provider, issuer, subject, email, trusted) values
  ('1d000000-0000-4000-8000-0000000000c1', '1d000000-0000-4000-8000-0000000000a2', 'idp', 'https://idp.example',
   'quinn', 'quinn-oidc@example.test', true);

select table_privs_are('app', 'identities', 'authenticated', array[]::text[], 'authenticated cannot touch identities');
select table_privs_are('app', 'oauth_flows', 'anon', array[]::text[], 'anon cannot touch flows');
select table_privs_are('app', 'oauth_codes', 'anon', array[]::text[], 'anon cannot touch one-time codes');
select table_privs_are('app', 'identity_link_codes', 'authenticated', array[]::text[],
  'authenticated cannot touch link codes');

-- A signed-in caller, with its token's claims, reaches none of it directly: neither the tables nor the functions.
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "1d000000-0000-4000-8000-0000000000a2", "role": "authenticated", ' ||
  '"session_id": "1d000000-0000-4000-8000-0000000000b3"}', true);
select throws_ok($$select id from app.identities$$, '42501', null, 'no read of identities, even its own');
select throws_ok($$delete from app.identities$$, '42501', null, 'no unlink past the last-method rule');
select throws_ok($$select app.unlink_identity('1d000000-0000-4000-8000-0000000000a2',
    '1d000000-0000-4000-8000-0000000000c1', null, null)$$, '42501', null, 'nor through the function');
select throws_ok($$select * from app.complete_identity_link(repeat('0', 64), '1d000000-0000-4000-8000-0000000000a2',
    '1d000000-0000-4000-8000-0000000000b3', null, null, 's', 'b')$$, '42501', null, 'no link completed directly');
select throws_ok($$select * from app.change_password('1d000000-0000-4000-8000-0000000000a2', null, 'x')$$, '42501', null,
  'no password set directly, fresh sign-in or not');
reset role;

select throws_ok($$insert into app.identities (user_id, provider, issuer, subject)
                   values ('1d000000-0000-4000-8000-0000000000a1', 'idp', 'https://idp.example', 'quinn')$$,
  '23505', null, 'an (issuer, subject) belongs to one account');

-- The callback's conclusion.
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'stranger',
    'pat-oidc@example.test', true, 'Mallory', null, null, repeat('a', 64), 60, null, null, null)),
  'identity_not_linked', 'a new identity with an address an account holds is not joined to it, verified or not');
select is_empty($$select 1 from app.identities where subject = 'stranger'$$, 'nothing was linked');
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'quinn',
    'someone-else@example.test', true, 'Q', null, null, repeat('b', 64), 60, null, null, repeat('C', 43))),
  'signed_in', 'a known identity signs into its account whatever its address is now');
select is((select user_id from app.oauth_codes where code_hash = repeat('b', 64)),
  '1d000000-0000-4000-8000-0000000000a2'::uuid, 'its one-time code is for that account');
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'newcomer',
    'newcomer-oidc@example.test', false, 'New', null, null, repeat('c', 64), 60, null, null, repeat('C', 43))),
  'registered', 'a new identity with a free address makes an account');
select row_eq($$select password_hash, is_verified from app.users where email = 'newcomer-oidc@example.test'$$,
  row(null::text, false), 'without a password, unverified as the provider said');
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'pats-other',
    'pat-other@example.test', true, 'P', '1d000000-0000-4000-8000-0000000000a1',
    '1d000000-0000-4000-8000-0000000000b1', repeat('d', 64), 60, null, null, null)),
  'link_pending', 'a link waits for the session that asked');
select is((select outcome from app.complete_identity_link(repeat('d', 64), '1d000000-0000-4000-8000-0000000000a2',
    '1d000000-0000-4000-8000-0000000000b3', null, null, 's', 'b')),
  'invalid_code', 'another account''s session cannot complete it, and spends the code');
select is_empty($$select 1 from app.identities where subject = 'pats-other'$$, 'so nothing was linked');
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'pats-other',
    'pat-other@example.test', true, 'P', '1d000000-0000-4000-8000-0000000000a1',
    '1d000000-0000-4000-8000-0000000000b1', repeat('9', 64), 60, null, null, null)), 'link_pending', 'asked again');
select is((select outcome from app.complete_identity_link(repeat('9', 64), '1d000000-0000-4000-8000-0000000000a1',
    '1d000000-0000-4000-8000-0000000000b1', null, null, 's', 'b')),
  'linked', 'the asking session completes the link');
update app.sessions set revoked_at = now(), revoked_reason = 'logout' where id = '1d000000-0000-4000-8000-0000000000b1';
select is((select outcome from app.complete_oauth_flow('idp', 'https://idp.example', 'pats-third',
    'pat-third@example.test', true, 'P', '1d000000-0000-4000-8000-0000000000a1',
    '1d000000-0000-4000-8000-0000000000b1', repeat('e', 64), 60, null, null, null)),
  'link_expired', 'a link whose session ended links nothing');

-- Unlinking: never without a recent proof of the asking session, never the last way to sign in.
select throws_ok($$select app.unlink_identity('1d000000-0000-4000-8000-0000000000a2',
    '1d000000-0000-4000-8000-0000000000c1', null, null)$$, 'PTRAU', null, 'no unlink without a recent proof');
update app.sessions set reauthenticated_at = now(), reauthenticated_with = 'provider'
where id = '1d000000-0000-4000-8000-0000000000b3';
select is(app.unlink_identity('1d000000-0000-4000-8000-0000000000a2', '1d000000-0000-4000-8000-0000000000c1', null,
  null), 'last_sign_in_method', 'an account without a password keeps its only identity');
select is(app.unlink_identity('1d000000-0000-4000-8000-0000000000a1', '1d000000-0000-4000-8000-0000000000c1', null,
  null), 'not_found', 'nobody unlinks another account''s identity');

-- A missing password: only a proof the session gave within 5 minutes stands in for it, never a sign-in's age.
select set_config('request.jwt.claims', '{"sub": "1d000000-0000-4000-8000-0000000000a2", "role": "authenticated", ' ||
  '"session_id": "1d000000-0000-4000-8000-0000000000b2"}', true);
select is((select outcome from app.change_password('1d000000-0000-4000-8000-0000000000a2', null, 'new-hash')),
  'stale', 'a session without a proof does not stand in for the password');
select is(app.delete_account('1d000000-0000-4000-8000-0000000000a2', null), false, 'nor deletes the account');
select set_config('request.jwt.claims', '{"sub": "1d000000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "1d000000-0000-4000-8000-0000000000b3"}', true);
select is((select outcome from app.change_password('1d000000-0000-4000-8000-0000000000a2', null, 'new-hash')),
  'stale', 'nor does another account''s session with a proof');
update app.sessions set reauthenticated_at = null, reauthenticated_with = null
where id = '1d000000-0000-4000-8000-0000000000b3';
select set_config('request.jwt.claims', '{"sub": "1d000000-0000-4000-8000-0000000000a2", "role": "authenticated", ' ||
  '"session_id": "1d000000-0000-4000-8000-0000000000b3"}', true);
select is((select outcome from app.change_password('1d000000-0000-4000-8000-0000000000a2', null, 'new-hash')),
  'stale', 'a provider sign-in a minute old is no proof');
update app.sessions set reauthenticated_at = now() - interval '6 minutes', reauthenticated_with = 'provider'
where id = '1d000000-0000-4000-8000-0000000000b3';
select is(app.delete_account('1d000000-0000-4000-8000-0000000000a2', null), false, 'nor a proof 6 minutes old');
update app.sessions set reauthenticated_at = now() where id = '1d000000-0000-4000-8000-0000000000b3';
select is((select outcome from app.change_password('1d000000-0000-4000-8000-0000000000a2', null, 'new-hash')),
  'changed', 'a proof of the last 5 minutes does');

-- A link without the password needs a recent proof of the asking session.
select set_config('request.jwt.claims', '{"sub": "1d000000-0000-4000-8000-0000000000a2", "role": "authenticated", ' ||
  '"session_id": "1d000000-0000-4000-8000-0000000000b2"}', true);
select is((select link_allowed from app.start_oauth_flow(repeat('f', 64), 'idp', repeat('v', 43), 'n',
    'https://app.example/', null, 60, 10, '1d000000-0000-4000-8000-0000000000a2',
    '1d000000-0000-4000-8000-0000000000b2', null)), false, 'a stale session may not start a link without the password');

-- Flows bound to their browser and provider (RFC 9700 4.7.1, 4.4), and the app's PKCE required (2.1.1).
reset role;
select throws_ok($$insert into app.oauth_flows (state_hash, provider, code_verifier, nonce, redirect_to, browser_hash,
                   expires_at) values (repeat('1', 64), 'idp', repeat('v', 43), 'n', 'https://app.example/', repeat('2', 64),
                   now() + interval '10 minutes')$$,
  '23514', null, 'a sign-in is not stored without the app''s PKCE challenge');
select throws_ok($$insert into app.oauth_flows (state_hash, provider, code_verifier, nonce, redirect_to,
                   app_code_challenge, expires_at) values (repeat('1', 64), 'idp', repeat('v', 43), 'n',
                   'https://app.example/', repeat('C', 43), now() + interval '10 minutes')$$,
  '23514', null, 'nor unbound to a browser');
select throws_ok($$insert into app.oauth_codes (code_hash, user_id, identity_id, expires_at)
                   values (repeat('3', 64), '1d000000-0000-4000-8000-0000000000a2',
                   '1d000000-0000-4000-8000-0000000000c1', now() + interval '1 minute')$$,
  '23502', null, 'a one-time code always carries the challenge its exchange must answer');
select is((select retry_after from app.start_oauth_flow(repeat('4', 64), 'idp', repeat('v', 43), 'n',
    'https://app.example/', null, 60, 10, null, null, null, repeat('C', 43), repeat('5', 64))), 0, 'a bound sign-in');
select is_empty($$select * from app.consume_oauth_flow(repeat('4', 64), repeat('6', 64), 'idp')$$,
  'a callback in another browser gets nothing of the flow');
select is_empty($$select * from app.consume_oauth_flow(repeat('4', 64), repeat('5', 64), 'idp')$$,
  'and spent it: not even its own browser gets it afterwards');
select is((select retry_after from app.start_oauth_flow(repeat('7', 64), 'idp', repeat('v', 43), 'n',
    'https://app.example/', null, 60, 10, null, null, null, repeat('C', 43), repeat('5', 64))), 0, 'another one');
select is_empty($$select * from app.consume_oauth_flow(repeat('7', 64), repeat('5', 64), 'other')$$,
  'another provider''s callback gets nothing of it (mix-up)');
select is((select retry_after from app.start_oauth_flow(repeat('8', 64), 'idp', repeat('v', 43), 'n',
    'https://app.example/', null, 60, 10, null, null, null, repeat('C', 43), repeat('5', 64))), 0, 'a third one');
select is((select provider from app.consume_oauth_flow(repeat('8', 64), repeat('5', 64), 'idp')), 'idp',
  'its own provider''s callback in its own browser gets it');
select is((select count(*)::int from app.bind_link_flow(repeat('4', 64), repeat('5', 64))), 0,
  'only a link is bound by its browser step');
select is((select array_agg(routine_name::text order by routine_name) from information_schema.routine_privileges
           where routine_schema = 'app' and grantee in ('anon', 'authenticated', 'PUBLIC')
             and routine_name in ('consume_oauth_flow', 'bind_link_flow', 'start_oauth_flow')), null,
  'no client role may call the flows'' functions');

-- Pre-hijacking: an identity whose provider did not vouch for the address goes when a reset code proves it.
select app.reclaim_account((select id from app.users where email = 'newcomer-oidc@example.test'), false, 7, null, null);
select is_empty($$select 1 from app.identities where subject = 'newcomer'$$,
  'a reset code drops the identity that never proved the address');

select * from finish();
rollback;
