-- Sign-in codes as Postgres holds them, with no function in between (HTTP: tests/auth-sign-in-codes.test.ts): the
-- tables and functions are the service's alone; a code is stored only for a known, active address and within the
-- mail quota; a right code works once; wrong codes are counted per email, known or not, and stop at the bound;
-- a code on an unproven address removes the registrant's password and what they added; with sign-up on, a code to an
-- unknown address creates its account.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(20);

insert into app.users (id, name, email, password_hash, is_verified) values
  ('c0de0000-0000-4000-8000-0000000000a1', 'Cody', 'cody@example.test', 'a-registrants-hash', false);
-- A factor the registrant enrolled while the address was unproven, as the service once allowed.
insert into app.second_factors (user_id, secret_sealed, secret_key_id, activated_at) values
  ('c0de0000-0000-4000-8000-0000000000a1', 'sealed', 'm1', now());

select table_privs_are('app', 'sign_in_codes', 'authenticated', array[]::text[], 'authenticated cannot touch the codes');
select table_privs_are('app', 'sign_in_code_requests', 'anon', array[]::text[], 'anon cannot touch the requests');
select function_privs_are('app', 'sign_in_with_code',
  array['text', 'text', 'integer', 'integer', 'integer', 'text', 'text', 'boolean', 'text'],
  'authenticated', array[]::text[], 'authenticated cannot check a code');
select function_privs_are('app', 'request_sign_in_code',
  array['text', 'text', 'integer', 'integer', 'integer', 'text', 'text', 'boolean'], 'anon', array[]::text[],
  'anon cannot store a code');
select table_privs_are('app', 'sign_up_codes', 'authenticated', array[]::text[],
  'authenticated cannot touch the sign-up codes');

select app.request_sign_in_code('nobody@example.test', 'hash-0', 10, 60, 5, 'Your sign-in code', 'code 0');
select is((select count(*)::integer from app.mail_outbox where recipient = 'nobody@example.test'), 0,
  'nothing is mailed to an unknown address');
select app.request_sign_in_code('cody@example.test', 'hash-1', 10, 60, 5, 'Your sign-in code', 'code 1');
select app.request_sign_in_code('cody@example.test', 'hash-2', 10, 60, 5, 'Your sign-in code', 'code 2');
select is((select code_hash from app.sign_in_codes where user_id = 'c0de0000-0000-4000-8000-0000000000a1'), 'hash-1',
  'a second code within the minute is neither stored nor mailed');
select is((select count(*)::integer from app.mail_outbox where recipient = 'cody@example.test'), 1, 'one mail');
select app.request_sign_in_code('cody@example.test', 'hash-3', 10, 0, 5, 'Your sign-in code', 'code 3');
select is((select code_hash from app.sign_in_codes where user_id = 'c0de0000-0000-4000-8000-0000000000a1'), 'hash-3',
  'a new code ends the last');

select is((select outcome from app.sign_in_with_code('cody@example.test', 'hash-1', 10, 3600, 7, null, null)),
  'bad-code', 'a superseded code is a wrong one');
select is((select outcome from app.sign_in_with_code('cody@example.test', 'hash-3', 10, 3600, 7, null, null)),
  'signed-in', 'the live code signs in');
select is((select outcome from app.sign_in_with_code('cody@example.test', 'hash-3', 10, 3600, 7, null, null)),
  'bad-code', 'and only once');
select ok((select is_verified and password_hash is null from app.users
           where id = 'c0de0000-0000-4000-8000-0000000000a1'),
  'the code proved the unproven address and removed the password its registrant chose');
select is((select count(*)::integer from app.second_factors where user_id = 'c0de0000-0000-4000-8000-0000000000a1'), 0,
  'and the factor added while it was unproven');

-- Two wrong codes so far for this email (the superseded one and the reuse); eight more reach the bound of 10.
select app.sign_in_with_code('cody@example.test', 'wrong', 10, 3600, 7, null, null) from generate_series(1, 8);
select is((select outcome from app.sign_in_with_code('cody@example.test', 'wrong', 10, 3600, 7, null, null)),
  'throttled', 'past 10 wrong codes an hour the email is refused before its code is checked');
select app.sign_in_with_code('ghost@example.test', 'wrong', 10, 3600, 7, null, null) from generate_series(1, 10);
select is((select outcome from app.sign_in_with_code('ghost@example.test', 'wrong', 10, 3600, 7, null, null)),
  'throttled', 'an unknown email is counted as a known one');

-- OTP_SIGN_UP: the functions pass sign_up true; an unknown address gets a code that creates its account, verified.
select app.request_sign_in_code('newcomer@example.test', 'hash-new', 10, 0, 5, 'Your sign-in code', 'code new', true);
select is((select count(*)::integer from app.mail_outbox where recipient = 'newcomer@example.test'), 1,
  'with sign-up on, an unknown address is mailed a code');
select is((select outcome from app.sign_in_with_code('newcomer@example.test', 'hash-new', 10, 3600, 7, null, null)),
  'bad-code', 'without sign-up, its code signs nothing in');
select is((select row(outcome, name)::text from app.sign_in_with_code('newcomer@example.test', 'hash-new', 10, 3600,
  7, null, null, true, 'Newcomer')), '(registered,Newcomer)', 'with sign-up, its code creates the named account');
select ok((select is_verified and password_hash is null and not is_anonymous from app.users
           where email = 'newcomer@example.test'), 'verified by the code, with no password');

select * from finish();
rollback;
