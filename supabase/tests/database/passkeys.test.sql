-- Passkeys as Postgres enforces them: credentials and challenges are out of reach of the API roles whatever their
-- claims say; a challenge is spent once, and not after 5 minutes; registering needs a recent proof and room; a
-- device-bound counter only moves forward; the last way in stays. What the functions answer is tested over HTTP in
-- tests/passkeys.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(20);

insert into app.users (id, name, email, password_hash, is_verified) values
  ('0a550000-0000-4000-8000-0000000000a1', 'Pat', 'pat-passkey@example.test', 'not-a-real-hash', true);
insert into app.sessions (id, user_id, expires_at) values
  ('0a550000-0000-4000-8000-0000000000b1', '0a550000-0000-4000-8000-0000000000a1', now() + interval '1 hour');
insert into app.passkeys (id, user_id, credential_id, public_key, sign_count, device_type, backed_up, aaguid, name,
                          trusted) values
  ('0a550000-0000-4000-8000-0000000000c1', '0a550000-0000-4000-8000-0000000000a1', 'device-bound-credential-1',
   '\x0102030405060708090a0b0c0d0e0f10', 5, 'singleDevice', false, '00000000-0000-0000-0000-000000000000', 'Key',
   true);

select table_privs_are('app', 'passkeys', 'authenticated', array[]::text[],
  'authenticated cannot read or change passkeys');
select table_privs_are('app', 'passkeys', 'anon', array[]::text[], 'anon cannot read or change passkeys');
select table_privs_are('app', 'passkey_challenges', 'authenticated', array[]::text[],
  'authenticated cannot read or write challenges');
select ok((select relrowsecurity from pg_class where oid = 'app.passkeys'::regclass),
  'passkeys have row-level security');
select ok((select relrowsecurity from pg_class where oid = 'app.passkey_challenges'::regclass),
  'challenges have row-level security');
select ok(not has_function_privilege('authenticated', 'app.begin_passkey_assertion(text, text, uuid, uuid, text)',
  'execute'), 'authenticated cannot spend a challenge or read a credential');

-- A token's claims reach nothing.
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "0a550000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "0a550000-0000-4000-8000-0000000000b1", "aal": "aal2"}', true);
select throws_ok($$select id from app.passkeys$$, '42501', null, 'the owner''s own token reads no passkey');
select throws_ok($$insert into app.passkey_challenges (challenge_hash, purpose, expires_at)
                   values (repeat('a', 64), 'sign_in', now() + interval '1 hour')$$,
  '42501', null, 'nor plants a challenge');
reset role;

-- Single use, and not after 5 minutes.
select is((select outcome from app.start_passkey_challenge('sign_in', 'challenge-one', null, null, null, 60, 100)),
  'started', 'a sign-in challenge is stored');
select is(app.spend_passkey_challenge('challenge-one', 'sign_in', null, null), true, 'it is spent once');
select is(app.spend_passkey_challenge('challenge-one', 'sign_in', null, null), false, 'and never again');
select app.start_passkey_challenge('sign_in', 'challenge-two', null, null, null, 60, 100);
update app.passkey_challenges set expires_at = now() - interval '1 second'
where challenge_hash = encode(sha256(convert_to('challenge-two', 'UTF8')), 'hex');
select is(app.spend_passkey_challenge('challenge-two', 'sign_in', null, null), false, 'an expired one is refused');
select app.start_passkey_challenge('sign_in', 'challenge-three', null, null, null, 60, 100);
select is(app.spend_passkey_challenge('challenge-three', 'session', '0a550000-0000-4000-8000-0000000000a1',
  '0a550000-0000-4000-8000-0000000000b1'), false, 'a sign-in challenge completes no session''s ceremony');

-- Registering needs a recent proof of the caller's session.
select set_config('request.jwt.claims', '{"sub": "0a550000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "0a550000-0000-4000-8000-0000000000b1"}', true);
select throws_ok($$select app.start_passkey_challenge('register', 'challenge-four',
  '0a550000-0000-4000-8000-0000000000a1', '0a550000-0000-4000-8000-0000000000b1', null, 60, 100)$$,
  'PTRAU', null, 'no registration without a proof');
update app.sessions set reauthenticated_at = now(), reauthenticated_with = 'password'
where id = '0a550000-0000-4000-8000-0000000000b1';
select is((select outcome from app.start_passkey_challenge('register', 'challenge-four',
  '0a550000-0000-4000-8000-0000000000a1', '0a550000-0000-4000-8000-0000000000b1', null, 60, 100)), 'started',
  'with a proof, the registration starts');

-- The counter of a device-bound key only moves forward; going back is recorded.
select is(app.use_passkey('0a550000-0000-4000-8000-0000000000c1', 6, false, null, null), true, 'a higher count');
select is(app.use_passkey('0a550000-0000-4000-8000-0000000000c1', 6, false, null, null), false, 'the same count');
select is((select count(*)::int from app.security_events
           where user_id = '0a550000-0000-4000-8000-0000000000a1' and type = 'passkey_counter_regressed'), 1,
  'is recorded as a cloned key');

-- The last way in stays: an account without a password keeps its one passkey, and gives it up for another.
insert into app.users (id, name, email, password_hash, is_verified) values
  ('0a550000-0000-4000-8000-0000000000a2', 'Nopa', 'nopa-passkey@example.test', null, true);
insert into app.sessions (id, user_id, expires_at, reauthenticated_at, reauthenticated_with) values
  ('0a550000-0000-4000-8000-0000000000b2', '0a550000-0000-4000-8000-0000000000a2', now() + interval '1 hour', now(),
   'passkey');
insert into app.passkeys (id, user_id, credential_id, public_key, device_type, backed_up, aaguid, name, trusted)
values ('0a550000-0000-4000-8000-0000000000c2', '0a550000-0000-4000-8000-0000000000a2', 'only-way-in-credential-1',
        '\x0102030405060708090a0b0c0d0e0f10', 'multiDevice', true, '00000000-0000-0000-0000-000000000000', 'Only', true);
select set_config('request.jwt.claims', '{"sub": "0a550000-0000-4000-8000-0000000000a2", "role": "authenticated", ' ||
  '"session_id": "0a550000-0000-4000-8000-0000000000b2"}', true);
select is(app.remove_passkey('0a550000-0000-4000-8000-0000000000a2', '0a550000-0000-4000-8000-0000000000c2', null,
  null), 'last_sign_in_method', 'the account''s last way in is kept');
insert into app.passkeys (user_id, credential_id, public_key, device_type, backed_up, aaguid, name, trusted)
values ('0a550000-0000-4000-8000-0000000000a2', 'only-way-in-credential-2', '\x0102030405060708090a0b0c0d0e0f10',
        'multiDevice', true, '00000000-0000-0000-0000-000000000000', 'Second', true);
select is(app.remove_passkey('0a550000-0000-4000-8000-0000000000a2', '0a550000-0000-4000-8000-0000000000c2', null,
  null), 'removed', 'with another passkey there, it goes');

select * from finish();
rollback;
