-- The changes feed's tables: tombstones are readable by their owner only
-- (forced RLS, one select policy, nothing else for the API roles), and the
-- change numbers and search words live in schema app, out of the API roles'
-- reach. What a caller gets through them is tested over HTTP in
-- tests/notes-changes.test.ts and tests/notes-filters.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(11);

select ok(
  (select relrowsecurity and relforcerowsecurity from pg_class where oid = 'public.note_tombstones'::regclass),
  'RLS is enabled and forced on public.note_tombstones'
);
select policies_are('public', 'note_tombstones', array['active owners read their tombstones'],
  'tombstones have one policy: their owner reads them');
select policy_cmd_is('public', 'note_tombstones', 'active owners read their tombstones', 'select',
  'the tombstones policy is for select only');
select policy_roles_are('public', 'note_tombstones', 'active owners read their tombstones',
  array['authenticated'], 'the tombstones policy applies to authenticated only');
select table_privs_are('public', 'note_tombstones', 'anon', array[]::text[], 'anon holds no privilege on tombstones');
select table_privs_are('public', 'note_tombstones', 'authenticated', array['SELECT'],
  'authenticated may only read tombstones; the delete trigger writes them');
-- Taking a change number locks the owner's counter row until commit: the API roles cannot take one by hand.
select function_privs_are('app', 'next_note_change', array['uuid'], 'authenticated', array[]::text[],
  'authenticated cannot take a change number');
select function_privs_are('app', 'next_note_change', array['uuid'], 'anon', array[]::text[],
  'anon cannot take a change number');

-- Another user's tombstone stays invisible, as that user's notes do.
insert into app.users (id, name, email, password_hash)
values ('00000000-0000-4000-8000-0000000000a1', 'Owner', 'owner@example.com', 'x'),
       ('00000000-0000-4000-8000-0000000000b2', 'Other', 'other@example.com', 'x');
insert into app.sessions (id, user_id, expires_at)
values ('00000000-0000-4000-8000-0000000000c3', '00000000-0000-4000-8000-0000000000b2', now() + interval '1 hour');
insert into public.notes (id, created_by, title)
values ('00000000-0000-4000-8000-0000000000d4', '00000000-0000-4000-8000-0000000000a1', 'deleted soon');
delete from public.notes where id = '00000000-0000-4000-8000-0000000000d4';
set local role authenticated;
select set_config('request.jwt.claims',
  '{"sub": "00000000-0000-4000-8000-0000000000b2", "role": "authenticated", "session_id": "00000000-0000-4000-8000-0000000000c3"}',
  true);
select is_empty('select note_id from public.note_tombstones', 'another user''s tombstone is not visible');
select throws_ok('select * from app.note_words', '42501', null, 'authenticated cannot read the search words');
select throws_ok('select * from app.note_counts', '42501', null, 'authenticated cannot read the change sequence');
reset role;

select * from finish();
rollback;
