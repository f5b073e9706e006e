-- REQUIRE_EMAIL_VERIFICATION as Postgres holds it (app.settings): while it is on, a token of an account whose
-- address is not verified reaches no note by any route, the Data API included: the notes and tombstone policies
-- refuse it, and so do the security definer functions that reach past them. What the functions answer (403
-- email_not_verified) is tested over HTTP in tests/accounts.test.ts; the same refusals as SQL in tests/rls.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(14);

insert into app.users (id, name, email, password_hash) values
  ('e0e00000-0000-4000-8000-0000000000a1', 'Una', 'una-unverified@example.test', 'not-a-real-hash');
insert into app.sessions (id, user_id, expires_at) values
  ('e0e00000-0000-4000-8000-0000000000b1', 'e0e00000-0000-4000-8000-0000000000a1', now() + interval '1 hour');
insert into public.notes (created_by, title) values ('e0e00000-0000-4000-8000-0000000000a1', 'una''s note');
insert into public.note_tombstones (note_id, created_by, change_seq) values
  (gen_random_uuid(), 'e0e00000-0000-4000-8000-0000000000a1', 1000000);

select table_privs_are('app', 'settings', 'authenticated', array[]::text[],
  'authenticated cannot read or change the settings the database enforces');
select is_empty(
  $$select policyname from pg_policies
    where schemaname = 'public' and tablename in ('notes', 'note_tombstones')
      and coalesce(qual, with_check) not like '%app.caller_reaches_notes()%'$$,
  'every notes and tombstone policy asks whether the caller reaches notes (verified as required, second factor made)'
);

update app.settings set require_email_verification = true;
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "e0e00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "e0e00000-0000-4000-8000-0000000000b1"}', true);

select is_empty($$select id from public.notes$$, 'required: an unverified caller reads none of its notes');
select is_empty($$select note_id from public.note_tombstones$$, 'required: nor its tombstones');
select throws_ok($$insert into public.notes (title) values ('unverified')$$, '42501', null,
  'required: an unverified caller creates no note');
select is_empty($$update public.notes set title = 'changed' returning id$$, 'required: nor changes one');
select is_empty($$delete from public.notes returning id$$, 'required: nor deletes one');
select throws_ok($$select app.claim_note_create_key('a-key', 'a-hash')$$, '42501', null,
  'required: nor claims a create key past the policies');
select is(app.caller_note_count(), 0, 'required: the count past the policies says nothing either');
select throws_ok($$select app.require_notes_caller()$$, 'PT403', null,
  'required: the statement that opens a notes request refuses the caller with PT403');

reset role;
update app.settings set require_email_verification = false;
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "e0e00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "e0e00000-0000-4000-8000-0000000000b1"}', true);

select lives_ok($$select app.require_notes_caller()$$, 'not required: the opening statement lets the caller in');
select is((select count(*)::int from public.notes), 1, 'not required: the caller reads its note');
select lives_ok($$insert into public.notes (title) values ('unverified and allowed')$$,
  'not required: the caller creates a note');

reset role;
update app.settings set require_email_verification = true;
update app.users set is_verified = true where id = 'e0e00000-0000-4000-8000-0000000000a1';
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "e0e00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "e0e00000-0000-4000-8000-0000000000b1"}', true);
select is((select count(*)::int from public.notes), 2, 'required: a verified caller reads its notes');

select * from finish();
rollback;
