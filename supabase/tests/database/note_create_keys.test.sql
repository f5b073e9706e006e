-- app.note_create_keys (the Idempotency-Key of each create) is out of the API
-- roles' reach; a caller claims and reads keys only through two functions, and
-- only their own: another user's identical key is a row of its own, unseen.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(7);

select table_privs_are('app', 'note_create_keys', 'anon', array[]::text[], 'anon holds no privilege on create keys');
select table_privs_are('app', 'note_create_keys', 'authenticated', array[]::text[],
  'authenticated holds no privilege on create keys: it goes through the functions');

insert into app.users (id, name, email, password_hash) values
  ('c0ffee00-0000-4000-8000-0000000000a1', 'Ann', 'ann-keys@example.test', 'not-a-real-hash'),
  ('c0ffee00-0000-4000-8000-0000000000b1', 'Ben', 'ben-keys@example.test', 'not-a-real-hash');
-- Ben signed in: the functions answer only a caller whose session is live (revoked_callers.test.sql).
insert into app.sessions (id, user_id, expires_at) values
  ('c0ffee00-0000-4000-8000-0000000000c1', 'c0ffee00-0000-4000-8000-0000000000b1', now() + interval '1 hour');
insert into app.note_create_keys (user_id, key, request_hash) values
  ('c0ffee00-0000-4000-8000-0000000000a1', 'same-key', 'ann''s');
-- Whatever the database was pushed with: these callers' addresses are not verified (email_verification.test.sql).
update app.settings set require_email_verification = false;

set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "c0ffee00-0000-4000-8000-0000000000b1", "role": "authenticated", ' ||
  '"session_id": "c0ffee00-0000-4000-8000-0000000000c1"}', true);
select is_empty($$select * from app.caller_note_create_key('same-key')$$,
  'a caller does not see another user''s identical key');
select isnt(app.claim_note_create_key('same-key', 'ben''s'), null,
  'a caller claims a key that another user already holds: keys belong to their user');
select is(app.claim_note_create_key('same-key', 'ben''s again'), null, 'a key already claimed is not claimed again');
select results_eq($$select request_hash from app.caller_note_create_key('same-key')$$, $$values ('ben''s')$$,
  'a caller reads their own key as first claimed');

reset role;
select results_eq(
  $$select user_id::text, request_hash from app.note_create_keys where key = 'same-key' order by 1$$,
  $$values ('c0ffee00-0000-4000-8000-0000000000a1', 'ann''s'), ('c0ffee00-0000-4000-8000-0000000000b1', 'ben''s')$$,
  'each user''s key is a row of its own, and the other user''s is untouched'
);

select * from finish();
rollback;
