-- What public.notes accepts, whoever writes it: status values, the title/content
-- rule, the length limits, the defaults, and updated_at kept by the trigger as a strictly increasing version.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(16);

insert into app.users (id, name, email, password_hash) values
  ('c0ffee00-0000-4000-8000-000000000001', 'Carol', 'carol@example.test', 'not-a-real-hash');

-- Written as the migration owner with an explicit owner, so only the constraints decide.
select lives_ok(
  $$insert into public.notes (id, created_by, title) values
    ('00000000-0000-4000-8000-0000000000c1', 'c0ffee00-0000-4000-8000-000000000001', 'only a title')$$,
  'a note with a title and no content is accepted'
);
select results_eq(
  $$select content, status from public.notes where id = '00000000-0000-4000-8000-0000000000c1'$$,
  $$values ('', 'DRAFT')$$,
  'omitted content is stored as the empty string and status defaults to DRAFT'
);
select lives_ok(
  $$insert into public.notes (created_by, content, status) values
    ('c0ffee00-0000-4000-8000-000000000001', 'only content', 'PUBLISHED')$$,
  'a note with content and no title is accepted, and PUBLISHED is a status'
);
select throws_ok(
  $$insert into public.notes (created_by) values ('c0ffee00-0000-4000-8000-000000000001')$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_title_or_content"',
  'a note with neither title nor content is refused'
);
select throws_ok(
  $$update public.notes set title = '' where id = '00000000-0000-4000-8000-0000000000c1'$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_title_or_content"',
  'an update that empties the only filled field is refused'
);
select throws_ok(
  $$insert into public.notes (created_by, title, status) values ('c0ffee00-0000-4000-8000-000000000001', 't', 'ARCHIVED')$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_status_check"',
  'a status other than DRAFT or PUBLISHED is refused'
);
select throws_ok(
  $$insert into public.notes (created_by, title, status) values ('c0ffee00-0000-4000-8000-000000000001', 't', 'draft')$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_status_check"',
  'status values are case-sensitive'
);
select lives_ok(
  $$insert into public.notes (created_by, title) values ('c0ffee00-0000-4000-8000-000000000001', repeat('t', 1000))$$,
  'a title of 1,000 characters is accepted'
);
select throws_ok(
  $$insert into public.notes (created_by, title) values ('c0ffee00-0000-4000-8000-000000000001', repeat('t', 1001))$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_title_check"',
  'a title of 1,001 characters is refused'
);
select lives_ok(
  $$insert into public.notes (created_by, content) values ('c0ffee00-0000-4000-8000-000000000001', repeat('é', 100000))$$,
  'content of 100,000 characters is accepted, counted in characters rather than bytes'
);
select throws_ok(
  $$insert into public.notes (created_by, content) values ('c0ffee00-0000-4000-8000-000000000001', repeat('c', 100001))$$,
  '23514', 'new row for relation "notes" violates check constraint "notes_content_check"',
  'content of 100,001 characters is refused'
);
select throws_ok(
  $$insert into public.notes (created_by, title) values ('d0d0d0d0-0000-4000-8000-000000000009', 't')$$,
  '23503', null,
  'a note must belong to an existing account'
);

-- updated_at is the note's version: every update moves it to now() or, when that is not later (now() is
-- fixed for the whole transaction), 1 ms past the previous version, so versions never repeat.
update public.notes set created_at = '2000-01-01T00:00:00Z' where id = '00000000-0000-4000-8000-0000000000c1';
create temporary table versions as
  select 0 as step, updated_at from public.notes where id = '00000000-0000-4000-8000-0000000000c1';
update public.notes set content = 'later' where id = '00000000-0000-4000-8000-0000000000c1';
insert into versions select 1, updated_at from public.notes where id = '00000000-0000-4000-8000-0000000000c1';
update public.notes set status = 'PUBLISHED', updated_at = '1999-01-01T00:00:00Z'
  where id = '00000000-0000-4000-8000-0000000000c1';
insert into versions select 2, updated_at from public.notes where id = '00000000-0000-4000-8000-0000000000c1';
select results_eq(
  $$select created_at from public.notes where id = '00000000-0000-4000-8000-0000000000c1'$$,
  $$values ('2000-01-01T00:00:00Z'::timestamptz)$$,
  'an update leaves created_at alone'
);
select ok(
  (select bool_and(date_trunc('milliseconds', later.updated_at) > date_trunc('milliseconds', earlier.updated_at)
                   and later.updated_at >= now())
   from versions as earlier join versions as later on later.step = earlier.step + 1),
  'each update in one transaction moves updated_at at least 1 ms past the previous version, and never before now()'
);
select isnt(
  (select updated_at from versions where step = 2),
  '1999-01-01T00:00:00Z'::timestamptz,
  'updated_at cannot be set by hand: the trigger overrides it'
);

-- Removing the account removes its notes.
delete from app.users where id = 'c0ffee00-0000-4000-8000-000000000001';
select is_empty(
  $$select 1 from public.notes where created_by = 'c0ffee00-0000-4000-8000-000000000001'$$,
  'deleting an account deletes its notes'
);

select * from finish();
rollback;
