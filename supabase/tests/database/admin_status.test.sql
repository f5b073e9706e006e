-- app.set_user_status, the statement behind POST /admin-users: the acting admin (the JWT caller) never changes its
-- own status and never suspends an ADMIN, whatever calls it; an account whose role an operator revoked can be.
-- The HTTP answers (400 cannot_change_own_status, cannot_suspend_admin) are tested in tests/admin.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(7);

insert into app.users (id, name, email, password_hash, role) values
  ('ad000000-0000-4000-8000-0000000000a1', 'Acting', 'acting-admin@example.test', 'not-a-real-hash', 'ADMIN'),
  ('ad000000-0000-4000-8000-0000000000b1', 'Other', 'other-admin@example.test', 'not-a-real-hash', 'ADMIN'),
  ('ad000000-0000-4000-8000-0000000000c1', 'User', 'plain-user@example.test', 'not-a-real-hash', 'STANDARD_USER');
select set_config('request.jwt.claims', '{"sub": "ad000000-0000-4000-8000-0000000000a1", "role": "authenticated"}',
  true);

select ok(not has_function_privilege('authenticated', 'app.set_user_status(uuid, text)', 'execute'),
  'authenticated cannot set a status: only the admin endpoint''s statement does');
select is((select outcome from app.set_user_status('ad000000-0000-4000-8000-0000000000a1', 'SUSPENDED')),
  'own-account', 'an admin does not suspend itself');
select is((select outcome from app.set_user_status('ad000000-0000-4000-8000-0000000000b1', 'SUSPENDED')),
  'admin-account', 'an admin does not suspend another admin');
select is((select status from app.users where id = 'ad000000-0000-4000-8000-0000000000b1'), 'ACTIVE',
  'the other admin stays ACTIVE');
select is((select outcome from app.set_user_status('ad000000-0000-4000-8000-0000000000c1', 'SUSPENDED')),
  'updated', 'an admin suspends a standard user');

update app.users set role = 'STANDARD_USER' where id = 'ad000000-0000-4000-8000-0000000000b1';
select is((select outcome || ' ' || status from app.set_user_status('ad000000-0000-4000-8000-0000000000b1', 'SUSPENDED')),
  'updated SUSPENDED', 'once an operator revokes the role, the account can be suspended');
select is((select outcome from app.set_user_status(gen_random_uuid(), 'ACTIVE')), 'unknown-user',
  'an id of no account changes nothing');

select * from finish();
rollback;
