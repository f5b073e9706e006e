-- The account lifecycle's rules that Postgres holds, whatever calls it: a code alone verifies no address,
-- device tokens end with the credentials they vouched for, refused logins are logged once a window, and no
-- function hashes.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(11);

insert into app.users (id, name, email, password_hash) values
  ('b1f2e000-0000-4000-8000-000000000001', 'Owner', 'owner@example.test', 'first-hash');
insert into app.email_verification_codes (user_id, code_hash, expires_at, attempts_left) values
  ('b1f2e000-0000-4000-8000-000000000001', 'the-code-hmac', now() + interval '1 hour', 5);

select is(
  (select outcome from app.verify_email('owner@example.test', 'the-code-hmac', null, null)),
  'unproven',
  'a right code alone verifies nothing'
);
select is(
  (select outcome from app.verify_email('owner@example.test', 'the-code-hmac', null, 'another-hash')),
  'unproven',
  'nor with a password hash that is not the account''s'
);
select is(
  (select attempts_left from app.email_verification_codes where user_id = 'b1f2e000-0000-4000-8000-000000000001'),
  5,
  'an unproven request uses up none of the code''s tries'
);
select is(
  (select outcome from app.verify_email('owner@example.test', 'the-code-hmac', null, 'first-hash')),
  'verified',
  'the code with the account''s password hash verifies'
);

select is(
  (select device_generation from app.start_session('b1f2e000-0000-4000-8000-000000000001', 60, 60, null, null)),
  0,
  'a sign-in learns the account''s device generation'
);
update app.users set password_hash = 'second-hash' where id = 'b1f2e000-0000-4000-8000-000000000001';
select is(
  (select device_generation from app.users where id = 'b1f2e000-0000-4000-8000-000000000001'),
  1,
  'a new password raises the device generation'
);
update app.users set status = 'SUSPENDED' where id = 'b1f2e000-0000-4000-8000-000000000001';
select is(
  (select device_generation from app.users where id = 'b1f2e000-0000-4000-8000-000000000001'),
  2,
  'so does a suspension'
);
update app.users set status = 'ACTIVE' where id = 'b1f2e000-0000-4000-8000-000000000001';

-- A device token of an older generation is no device: past the account's cap (1 here) it is refused.
select app.take_login_attempt('owner@example.test', null, 900, 5, 300, 30, 3600, 1, null, null, null, 3600, 10, null);
select cmp_ok(
  app.take_login_attempt('owner@example.test', null, 900, 5, 300, 30, 3600, 1,
                         'b1f2e000-0000-4000-8000-000000000001', 0, 'old-device', 3600, 10, null),
  '>', 0,
  'a device token of an older generation does not pass the account''s cap'
);
select is(
  app.take_login_attempt('owner@example.test', null, 900, 5, 300, 30, 3600, 1,
                         'b1f2e000-0000-4000-8000-000000000001', 2, 'current-device', 3600, 10, null),
  0,
  'one of the current generation does'
);

-- Refusals by the full account cap: the first is logged, the next hundred are not.
select app.take_login_attempt('owner@example.test', null, 900, 5, 300, 30, 3600, 1, null, null, null, 3600, 10, 'ua')
from generate_series(1, 100);
select is(
  (select count(*)::int from app.security_events
   where user_id = 'b1f2e000-0000-4000-8000-000000000001' and type = 'login_refused_by_limit'),
  1,
  '100 refused attempts write one login_refused_by_limit event'
);

select is_empty(
  $$select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('app', 'public') and p.prosrc ~ '(crypt|gen_salt)\s*\('$$,
  'no function in the database hashes with crypt() or gen_salt()'
);

select * from finish();
rollback;
