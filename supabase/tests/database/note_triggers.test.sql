-- What the triggers of public.notes keep, whoever writes: each owner's totals per status exact, the change numbers
-- gapless per owner (the notes' and the tombstones' together are 1 to the counter's latest), and every note's
-- search words the ones app.note_search_vector gives, through inserts of one row and of many, by the owner under
-- row-level security and by the migration owner, and through statements that fail.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(14);

insert into app.users (id, name, email, password_hash, is_verified) values
  ('00000000-0000-4000-8000-0000000000a1', 'Ann', 'ann@example.test', 'x', true),
  ('00000000-0000-4000-8000-0000000000b2', 'Ben', 'ben@example.test', 'x', true);
insert into app.sessions (id, user_id, expires_at)
values ('00000000-0000-4000-8000-0000000000c3', '00000000-0000-4000-8000-0000000000a1', now() + interval '1 hour');

-- Every owner's totals against their notes, and their numbers against 1 .. the counter's latest.
create function pg_temp.totals_off() returns setof uuid language sql as $$
  select c.user_id from app.note_counts as c
  where (c.notes, c.published) is distinct from (
    select (count(*)::integer, (count(*) filter (where n.status = 'PUBLISHED'))::integer)
    from public.notes as n where n.created_by = c.user_id)
$$;
create function pg_temp.numbers_off() returns setof uuid language sql as $$
  select c.user_id from app.note_counts as c
  where array(select generate_series(1, c.last_change)) is distinct from array(
    select seq from (
      select n.change_seq as seq from public.notes as n where n.created_by = c.user_id
      union all
      select t.change_seq from public.note_tombstones as t where t.created_by = c.user_id
    ) as taken order by seq)
$$;
create function pg_temp.words_off() returns setof uuid language sql as $$
  select n.id from public.notes as n left join app.note_words as w on w.note_id = n.id
  where w.words is distinct from app.note_search_vector(n.title, n.content) or w.created_by is distinct from n.created_by
$$;

-- Interleaved owners in one statement, then one row at a time.
insert into public.notes (created_by, title, content, status)
select case when g % 3 = 0 then '00000000-0000-4000-8000-0000000000b2'::uuid
            else '00000000-0000-4000-8000-0000000000a1'::uuid end,
       'Note ' || g, 'École Straße ' || g, case when g % 2 = 0 then 'PUBLISHED' else 'DRAFT' end
from generate_series(1, 9) as g;
insert into public.notes (created_by, title, status) values ('00000000-0000-4000-8000-0000000000b2', 'one', 'PUBLISHED');
insert into public.notes (created_by, content) values ('00000000-0000-4000-8000-0000000000a1', 'two');
select results_eq(
  $$select user_id, notes, published, last_change from app.note_counts order by user_id$$,
  $$values ('00000000-0000-4000-8000-0000000000a1'::uuid, 7, 3, 7::bigint),
           ('00000000-0000-4000-8000-0000000000b2'::uuid, 4, 2, 4::bigint)$$,
  'inserts of many rows and of one count each owner''s notes per status and number each note'
);
select is_empty('select pg_temp.numbers_off()', 'the numbers of the inserted notes are 1 to the latest, per owner');

-- Words written out by the insert trigger are the function's, with diacritics, quotes and backslashes.
insert into public.notes (created_by, title, content) values
  ('00000000-0000-4000-8000-0000000000a1', 'Ça l''été', E'back\\slash "quoted" ÆØÅ æøå ﬁ'),
  ('00000000-0000-4000-8000-0000000000a1', '', 'only content, ĞğİıŞş');
select is_empty('select pg_temp.words_off()', 'every note''s words are app.note_search_vector(title, content)');
select ok(
  (select words @@ 'ecole'::tsquery from app.note_words as w join public.notes as n on n.id = w.note_id
   where n.title = 'Note 1'),
  'a note''s words are unaccented: École is found as ecole'
);

-- Statements that fail take back what their triggers did.
savepoint failing;
select throws_ok(
  $$insert into public.notes (created_by, title, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'fine', 'DRAFT'),
           ('00000000-0000-4000-8000-0000000000a1', 'wrong', 'ARCHIVED')$$,
  '23514', null,
  'an insert whose second row breaks a check fails as a whole'
);
select throws_ok(
  $$insert into public.notes (id, created_by, title)
    select id, created_by, 'again' from public.notes where title = 'one'
    on conflict (id) do nothing$$,
  '23505', null,
  'an insert that would skip a conflicting id fails instead of counting a note it does not make'
);
rollback to savepoint failing;
select results_eq(
  $$select user_id, notes, published, last_change from app.note_counts order by user_id$$,
  $$values ('00000000-0000-4000-8000-0000000000a1'::uuid, 9, 3, 9::bigint),
           ('00000000-0000-4000-8000-0000000000b2'::uuid, 4, 2, 4::bigint)$$,
  'failed inserts leave the totals and the latest number as they were'
);
select results_eq(
  $$select count(*)::integer from app.note_words$$,
  $$select count(*)::integer from public.notes$$,
  'failed inserts leave no words behind'
);

-- The owner under row-level security: the triggers write what the caller cannot.
set local role authenticated;
select set_config('request.jwt.claims',
  '{"sub": "00000000-0000-4000-8000-0000000000a1", "role": "authenticated", "session_id": "00000000-0000-4000-8000-0000000000c3"}',
  true);
select lives_ok(
  $$insert into public.notes (created_by, title, status) values
    ('00000000-0000-4000-8000-0000000000a1', 'mine', 'PUBLISHED'),
    ('00000000-0000-4000-8000-0000000000a1', 'mine too', 'DRAFT')$$,
  'the owner inserts notes under row-level security'
);
select throws_ok(
  $$insert into public.notes (created_by, title) values ('00000000-0000-4000-8000-0000000000b2', 'not mine')$$,
  '42501', null,
  'a note for another owner is refused'
);
reset role;

-- Updates and deletions move the totals and take numbers too.
update public.notes set status = 'PUBLISHED' where title = 'Note 1' or content = 'two';
update public.notes set created_by = '00000000-0000-4000-8000-0000000000b2' where title = 'Note 5';
delete from public.notes where title in ('Note 7', 'one');
select is_empty('select pg_temp.totals_off()', 'after inserts, updates and deletions every owner''s totals are exact');
-- A change's number moves to the note's latest change, so what the rows hold is no longer 1 to the latest; the
-- latest counts every change, each taken once.
select results_eq(
  $$select user_id, last_change from app.note_counts order by user_id$$,
  $$values ('00000000-0000-4000-8000-0000000000a1'::uuid, 14::bigint),
           ('00000000-0000-4000-8000-0000000000b2'::uuid, 6::bigint)$$,
  'each insert, update and deletion took one number of its owner''s sequence (the moved note its new owner''s)'
);
select is_empty('select pg_temp.words_off()', 'after updates every note''s words are still its own');
select results_eq(
  $$select notes, published from app.note_counts where user_id = '00000000-0000-4000-8000-0000000000a1'$$,
  $$values (9, 6)$$,
  'the owner''s totals count the notes inserted under row-level security, not the refused one'
);

select * from finish();
rollback;
