-- What public.notes declares for row-level security: forced RLS, one policy
-- per command for authenticated only, each comparing the owner with
-- auth.uid(), and no privilege for anon. What those declarations do (who sees
-- and changes which rows, as each role) is tested in tests/rls.test.ts, on
-- PGlite and PostgreSQL alike.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(8);

select ok(
  (select relrowsecurity and relforcerowsecurity from pg_class where oid = 'public.notes'::regclass),
  'RLS is enabled and forced on public.notes, so even the table owner is filtered'
);
select is(
  (select count(*)::int from pg_policies where schemaname = 'public' and tablename = 'notes'),
  4,
  'public.notes has one policy per command (select, insert, update, delete)'
);
select is_empty(
  $$select policyname from pg_policies
    where schemaname = 'public' and tablename = 'notes' and roles <> array['authenticated']::name[]$$,
  'every notes policy applies to authenticated only'
);
select is_empty(
  $$select policyname from pg_policies
    where schemaname = 'public' and tablename = 'notes' and permissive = 'PERMISSIVE'
      and coalesce(qual, with_check) not like '%auth.uid()%'$$,
  'every notes policy compares the owner with auth.uid()'
);
select table_privs_are('public', 'notes', 'anon', array[]::text[], 'anon holds no privilege on notes');
select table_privs_are('public', 'notes', 'authenticated', array['SELECT', 'DELETE'],
  'authenticated may only select and delete whole rows (no truncate, references or trigger)');
select is(
  (select array_agg(column_name::text order by column_name) from information_schema.column_privileges
   where table_schema = 'public' and table_name = 'notes' and grantee = 'authenticated' and privilege_type = 'INSERT'),
  array['content', 'created_by', 'id', 'status', 'title'],
  'authenticated inserts only id, owner, title, content and status: never the times, the change number or the count');
select is(
  (select array_agg(column_name::text order by column_name) from information_schema.column_privileges
   where table_schema = 'public' and table_name = 'notes' and grantee = 'authenticated' and privilege_type = 'UPDATE'),
  array['content', 'status', 'title'],
  'authenticated updates only title, content and status: never the owner, the version or the attachment count');

select * from finish();
rollback;
