-- Row-level security on public.notes, role by role: the policies, not the
-- application code, keep each user's notes to that user.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(25);

-- Two accounts; each writes its notes below as itself.
insert into app.users (id, name, email, password_hash) values
  ('a11ce000-0000-4000-8000-000000000001', 'Alice', 'alice@example.test', 'not-a-real-hash'),
  ('b0b00000-0000-4000-8000-000000000002', 'Bob', 'bob@example.test', 'not-a-real-hash');

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
select table_privs_are('public', 'notes', 'authenticated', array['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  'authenticated may only select, insert, update and delete (no truncate, references or trigger)');

-- Alice writes two notes, Bob one.
set local role authenticated;
set local request.jwt.claims = '{"sub":"a11ce000-0000-4000-8000-000000000001","role":"authenticated","token_version":0}';
insert into public.notes (id, title) values
  ('00000000-0000-4000-8000-0000000000a1', 'alice one'),
  ('00000000-0000-4000-8000-0000000000a2', 'alice two');
set local request.jwt.claims = '{"sub":"b0b00000-0000-4000-8000-000000000002","role":"authenticated","token_version":0}';
insert into public.notes (id, title) values ('00000000-0000-4000-8000-0000000000b1', 'bob one');
select results_eq(
  $$select created_by from public.notes$$,
  $$values ('b0b00000-0000-4000-8000-000000000002'::uuid)$$,
  'created_by defaults to the caller (auth.uid()), and Bob sees his note only'
);

-- As Alice.
set local request.jwt.claims = '{"sub":"a11ce000-0000-4000-8000-000000000001","role":"authenticated","token_version":0}';
select results_eq(
  $$select title from public.notes order by title$$,
  $$values ('alice one'), ('alice two')$$,
  'Alice sees exactly her own notes'
);
select is_empty(
  $$select 1 from public.notes where id = '00000000-0000-4000-8000-0000000000b1'$$,
  'Alice cannot read Bob''s note even by its id'
);
select is_empty(
  $$update public.notes set title = 'taken over' where id = '00000000-0000-4000-8000-0000000000b1' returning id$$,
  'Alice''s update of Bob''s note changes no row'
);
select is_empty(
  $$delete from public.notes where id = '00000000-0000-4000-8000-0000000000b1' returning id$$,
  'Alice''s delete of Bob''s note removes no row'
);
select results_eq(
  $$update public.notes set title = 'alice one, edited' where id = '00000000-0000-4000-8000-0000000000a1' returning title$$,
  $$values ('alice one, edited')$$,
  'Alice changes her own note'
);
select throws_ok(
  $$update public.notes set created_by = 'b0b00000-0000-4000-8000-000000000002' where id = '00000000-0000-4000-8000-0000000000a1'$$,
  '42501', null,
  'Alice cannot hand her note to Bob: the update''s with check rejects the new owner'
);
select throws_ok(
  $$insert into public.notes (title, created_by) values ('planted', 'b0b00000-0000-4000-8000-000000000002')$$,
  '42501', null,
  'Alice cannot create a note in Bob''s name'
);
select results_eq(
  $$delete from public.notes where id = '00000000-0000-4000-8000-0000000000a2' returning id$$,
  $$values ('00000000-0000-4000-8000-0000000000a2'::uuid)$$,
  'Alice deletes her own note'
);

-- Authenticated but with no subject in the claims: auth.uid() is null, which owns nothing.
set local request.jwt.claims = '{"role":"authenticated","token_version":0}';
select is_empty($$select 1 from public.notes$$, 'a token without a subject sees no note');
select throws_ok(
  $$insert into public.notes (title) values ('nobody''s')$$,
  null, null,
  'a token without a subject cannot create a note'
);

-- The anonymous role: no privilege at all, so every statement is refused outright.
reset role;
set local role anon;
set local request.jwt.claims = '{"role":"anon"}';
select throws_ok($$select 1 from public.notes$$, '42501', null, 'anon cannot read notes');
select throws_ok($$insert into public.notes (title) values ('anonymous')$$, '42501', null, 'anon cannot create notes');
select throws_ok($$update public.notes set title = 'x'$$, '42501', null, 'anon cannot change notes');
select throws_ok($$delete from public.notes$$, '42501', null, 'anon cannot delete notes');
-- Even with a forged subject in its claims, anon has no policy and no grant.
set local request.jwt.claims = '{"sub":"a11ce000-0000-4000-8000-000000000001","role":"anon"}';
select throws_ok($$select 1 from public.notes$$, '42501', null, 'anon with a user''s subject still cannot read notes');

-- Back as the migration owner, which bypasses RLS here: what really happened to the rows.
reset role;
select results_eq(
  $$select title, created_by from public.notes where id = '00000000-0000-4000-8000-0000000000b1'$$,
  $$values ('bob one', 'b0b00000-0000-4000-8000-000000000002'::uuid)$$,
  'Bob''s note survived Alice untouched'
);
select results_eq(
  $$select created_by from public.notes where id = '00000000-0000-4000-8000-0000000000a1'$$,
  $$values ('a11ce000-0000-4000-8000-000000000001'::uuid)$$,
  'Alice''s note still belongs to Alice'
);
select is_empty(
  $$select 1 from public.notes where id = '00000000-0000-4000-8000-0000000000a2'$$,
  'Alice''s deleted note is gone'
);
select * from finish();
rollback;
