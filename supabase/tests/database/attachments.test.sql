-- Attachments as Postgres enforces them, through the Data API's role with each user's claims: only the note's owner
-- reads, reserves or deletes; the path is the server's; the limits hold in the reservation; every removal is queued
-- in the deleting transaction; a ready attachment is a change of its note. Over HTTP: tests/attachments.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(23);

update app.settings set attachment_max_bytes = 1000, attachment_quota_bytes = 2500;
insert into app.users (id, name, email, password_hash, is_verified) values
  ('b0000000-0000-4000-8000-0000000000a1', 'Ada', 'ada-attachments-test@example.test', 'not-a-real-hash', true),
  ('b0000000-0000-4000-8000-0000000000b1', 'Bob', 'bob-attachments-test@example.test', 'not-a-real-hash', true);
insert into app.users (id, name, is_anonymous) values ('b0000000-0000-4000-8000-0000000000c1', 'Anonymous', true);
-- Each account's live session has the account's id.
insert into app.sessions (id, user_id, expires_at)
select id, id, now() + interval '1 hour' from app.users where id::text like 'b0000000-%';
insert into public.notes (id, created_by, title) values
  ('b0000000-0000-4000-8000-0000000000d1', 'b0000000-0000-4000-8000-0000000000a1', 'Ada''s'),
  ('b0000000-0000-4000-8000-0000000000d2', 'b0000000-0000-4000-8000-0000000000a1', 'Ada''s second'),
  ('b0000000-0000-4000-8000-0000000000e1', 'b0000000-0000-4000-8000-0000000000b1', 'Bob''s'),
  ('b0000000-0000-4000-8000-0000000000f1', 'b0000000-0000-4000-8000-0000000000c1', 'Anonymous''s');

create function pg_temp.act_as(who uuid) returns void language sql as $$
  select set_config('request.jwt.claims',
    json_build_object('sub', who, 'role', 'authenticated', 'session_id', who)::text, true)
$$;

set local role authenticated;
select pg_temp.act_as('b0000000-0000-4000-8000-0000000000a1');
select lives_ok($$insert into public.attachments (note_id, name, content_type, size)
                  values ('b0000000-0000-4000-8000-0000000000d1', 'a.png', 'image/png', 1000)$$,
  'the owner reserves an attachment on her note');
select throws_ok($$insert into public.attachments (note_id, object_path, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000d1', 'b0000000-0000-4000-8000-0000000000b1/x', 'x.png',
                           'image/png', 1)$$,
  '42501', null, 'the path is not the client''s to choose');
select ok((select object_path = 'b0000000-0000-4000-8000-0000000000a1/' || id from public.attachments),
  'the path is the owner''s folder and the attachment''s random id');
select is((select state from public.attachments), 'pending', 'a reservation starts pending');
select throws_ok($$insert into public.attachments (note_id, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000d1', 'big.png', 'image/png', 1001)$$,
  'PT413', 'attachment_too_large', 'a file over attachment_max_bytes is refused');
select lives_ok($$insert into public.attachments (note_id, name, content_type, size)
                  values ('b0000000-0000-4000-8000-0000000000d2', 'b.pdf', 'application/pdf', 1000)$$,
  'a second file within the quota');
select throws_ok($$insert into public.attachments (note_id, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000d2', 'c.pdf', 'application/pdf', 501)$$,
  'PT413', 'attachment_quota', 'pending reservations count on the quota');
select throws_ok($$insert into public.attachments (note_id, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000d1', 'page.html', 'text/html', 10)$$,
  '23514', null, 'a type outside the allowed ones is refused');
select throws_ok($$insert into public.attachments (note_id, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000e1', 'mine.png', 'image/png', 10)$$,
  'PT404', 'attachment_note_missing', 'no attachment on another user''s note: it is no note of the caller''s');

-- Bob sees and removes nothing of Ada's.
select pg_temp.act_as('b0000000-0000-4000-8000-0000000000b1');
select is((select count(*)::integer from public.attachments), 0, 'another user reads no attachment');
delete from public.attachments;
reset role;
select is((select count(*)::integer from public.attachments), 2, 'another user deletes no attachment');

-- Twenty per note, pending ones included.
update app.settings set attachment_quota_bytes = 100000;
insert into public.attachments (note_id, created_by, name, content_type, size)
select 'b0000000-0000-4000-8000-0000000000d1', 'b0000000-0000-4000-8000-0000000000a1', 'n' || i || '.txt',
       'text/plain', 1
from generate_series(1, 19) i;
select throws_ok($$insert into public.attachments (note_id, created_by, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000d1', 'b0000000-0000-4000-8000-0000000000a1', 'x.txt',
                           'text/plain', 1)$$,
  'PT409', 'attachment_limit', 'the 21st attachment of a note is refused');

-- The anonymous account attaches nothing.
set local role authenticated;
select pg_temp.act_as('b0000000-0000-4000-8000-0000000000c1');
select throws_ok($$insert into public.attachments (note_id, name, content_type, size)
                   values ('b0000000-0000-4000-8000-0000000000f1', 'a.png', 'image/png', 1)$$,
  'PT403', 'anonymous_attachment', 'an anonymous account attaches nothing');
reset role;

-- Ready: counted on the note, as a change that keeps the note's version.
create temporary table before_ready as
  select n.updated_at, n.change_seq from public.notes n where n.id = 'b0000000-0000-4000-8000-0000000000d1';
update public.attachments set state = 'ready', expires_at = null where name = 'a.png';
select is((select attachments from public.notes where id = 'b0000000-0000-4000-8000-0000000000d1'), 1,
  'a ready attachment counts on its note');
select ok((select n.change_seq > b.change_seq from public.notes n, before_ready b
           where n.id = 'b0000000-0000-4000-8000-0000000000d1'), 'becoming ready is a change of the note');
select ok((select n.updated_at = b.updated_at from public.notes n, before_ready b
           where n.id = 'b0000000-0000-4000-8000-0000000000d1'), 'and keeps the note''s version');

-- Every deletion queues its object, in the deleting transaction.
set local role authenticated;
select pg_temp.act_as('b0000000-0000-4000-8000-0000000000a1');
delete from public.attachments where name = 'a.png';
reset role;
select is((select count(*)::integer from app.attachment_removals), 1, 'deleting an attachment queues its object');
select is((select attachments from public.notes where id = 'b0000000-0000-4000-8000-0000000000d1'), 0,
  'and its note counts one less');
delete from public.notes where id = 'b0000000-0000-4000-8000-0000000000d1';
select is((select count(*)::integer from app.attachment_removals), 20, 'deleting a note queues its attachments''');
delete from app.users where id = 'b0000000-0000-4000-8000-0000000000a1';
select is((select count(*)::integer from app.attachment_removals), 21, 'deleting the account queues all the rest');
select is((select count(*)::integer from public.attachments), 0, 'no attachment row outlives its account');

select table_privs_are('public', 'attachments', 'anon', array[]::text[], 'anon holds no privilege on attachments');
select table_privs_are('app', 'attachment_removals', 'authenticated', array[]::text[],
  'the removal queue is the server''s alone');

select * from finish();
rollback;
