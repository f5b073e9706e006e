-- Every function the authenticated role may call checks what the notes policies check: with the claims of a session
-- that has ended (signed out), each answers nothing or refuses. The list of such functions is checked too, so one
-- granted later without being added here fails this test until it is called here with a revoked session's claims.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(17);

insert into app.users (id, name, email, password_hash, is_verified) values
  ('e0e00000-0000-4000-8000-0000000000a1', 'Rhea', 'rhea-revoked@example.test', 'not-a-real-hash', true);
insert into app.sessions (id, user_id, expires_at, aal, second_factor, second_factor_at, revoked_at, revoked_reason)
values ('e0e00000-0000-4000-8000-0000000000b1', 'e0e00000-0000-4000-8000-0000000000a1', now() + interval '1 hour',
        'aal2', 'totp', now(), now(), 'logout');
insert into public.notes (id, created_by, title, content) values
  ('e0e00000-0000-4000-8000-0000000000c1', 'e0e00000-0000-4000-8000-0000000000a1', 'groceries', 'milk and eggs');
insert into app.note_create_keys (user_id, key, request_hash, note_id) values
  ('e0e00000-0000-4000-8000-0000000000a1', 'a-key', 'a-hash', 'e0e00000-0000-4000-8000-0000000000c1');

select bag_eq(
  $$select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('app', 'public') and has_function_privilege('authenticated', p.oid, 'execute')$$,
  array[
    'app.caller_is_active()', 'app.caller_verified_as_required()', 'app.caller_reaches_notes()',
    'app.require_active_caller()', 'app.require_notes_caller()', 'app.require_notes_writer()',
    'app.caller_note_count()', 'app.caller_note_count(text)', 'app.caller_note_matches(text)',
    'app.caller_change_position()', 'app.caller_note_create_key(text)', 'app.claim_note_create_key(text,text)',
    'app.save_note_version(uuid,uuid,text,text,text,timestamp with time zone)',
    'app.delete_note_version(uuid,uuid,timestamp with time zone)',
    'app.create_note_once(text,text,uuid,text,text,text)'
  ],
  'these are the functions authenticated may call, each checked below'
);

set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "e0e00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "e0e00000-0000-4000-8000-0000000000b1", "token_version": 0}', true);

select is(app.caller_is_active(), false, 'a signed-out session is not active');
select is(app.caller_verified_as_required(), false, 'nor verified as required');
select is(app.caller_reaches_notes(), false, 'nor reaches notes');
select throws_ok($$select app.require_active_caller()$$, 'PT401', null, 'the live opening statement refuses');
select throws_ok($$select app.require_notes_caller()$$, 'PT401', null, 'the notes opening statement refuses');
select throws_ok($$select app.require_notes_writer()$$, 'PT401', null, 'the writers'' opening statement refuses');
select is(app.caller_note_count(), 0, 'the note count answers nothing');
select is(app.caller_note_count('DRAFT'), 0, 'the count per status answers nothing');
select is_empty($$select app.caller_note_matches('milk')$$, 'the search answers no note');
select row_eq($$select * from app.caller_change_position()$$, row(0::bigint, 0::bigint),
  'the change position answers nothing');
select is_empty($$select * from app.caller_note_create_key('a-key')$$, 'a used create key answers nothing');
select throws_ok($$select app.claim_note_create_key('b-key', 'b-hash')$$, '42501', null, 'no key is claimed');
select is_empty(
  $$select * from app.save_note_version('e0e00000-0000-4000-8000-0000000000c1', 'e0e00000-0000-4000-8000-0000000000a1',
    'mine', null, null, now())$$,
  'no note is saved, nor read back');
select is_empty(
  $$select * from app.delete_note_version('e0e00000-0000-4000-8000-0000000000c1',
    'e0e00000-0000-4000-8000-0000000000a1', now())$$,
  'no note is deleted, nor read back');
select throws_ok(
  $$select * from app.create_note_once('c-key', 'c-hash', 'e0e00000-0000-4000-8000-0000000000a1', 'new', '', 'DRAFT')$$,
  '42501', null, 'no note is created');
reset role;

select is((select title from public.notes where id = 'e0e00000-0000-4000-8000-0000000000c1'), 'groceries',
  'the note is as it was');

select * from finish();
rollback;
