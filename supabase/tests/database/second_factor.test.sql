-- The second factor as Postgres enforces it: while an account has an active factor, a session that has not made
-- the second step (aal1) reaches none of its notes by any route, the Data API included, and the opening statements
-- of the notes and account calls refuse it (PTMFA); an aal2 session of the same account reaches them. A code's time
-- step is accepted once; wrong codes lock the factor. What the functions answer is tested over HTTP in
-- tests/second-factor.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(19);

insert into app.users (id, name, email, password_hash) values
  ('f0f00000-0000-4000-8000-0000000000a1', 'Tess', 'tess-totp@example.test', 'not-a-real-hash');
insert into app.sessions (id, user_id, expires_at, aal, second_factor, second_factor_at) values
  ('f0f00000-0000-4000-8000-0000000000b1', 'f0f00000-0000-4000-8000-0000000000a1', now() + interval '1 hour',
   'aal1', null, null),
  ('f0f00000-0000-4000-8000-0000000000b2', 'f0f00000-0000-4000-8000-0000000000a1', now() + interval '1 hour',
   'aal2', 'totp', now());
insert into public.notes (created_by, title) values ('f0f00000-0000-4000-8000-0000000000a1', 'tess''s note');
insert into app.second_factors (id, user_id, secret_sealed, secret_key_id, activated_at) values
  ('f0f00000-0000-4000-8000-0000000000c1', 'f0f00000-0000-4000-8000-0000000000a1', 'sealed', 'v1', now());

select table_privs_are('app', 'second_factors', 'authenticated', array[]::text[],
  'authenticated cannot read or change second factors');
select table_privs_are('app', 'recovery_codes', 'authenticated', array[]::text[],
  'authenticated cannot read or change recovery codes');
select throws_ok($$update app.sessions set aal = 'aal2' where id = 'f0f00000-0000-4000-8000-0000000000b1'$$,
  '23514', null, 'a session is not aal2 without the second step it made');

set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "f0f00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "f0f00000-0000-4000-8000-0000000000b1", "aal": "aal2"}', true);

select is_empty($$select id from public.notes$$, 'aal1: no note, whatever the token''s aal claim says');
select throws_ok($$insert into public.notes (title) values ('aal1')$$, '42501', null, 'aal1: no note created');
select is_empty($$update public.notes set title = 'changed' returning id$$, 'aal1: none changed');
select is_empty($$delete from public.notes returning id$$, 'aal1: none deleted');
select throws_ok($$select app.claim_note_create_key('a-key', 'a-hash')$$, '42501', null,
  'aal1: no create key claimed past the policies');
select is(app.caller_note_count(), 0, 'aal1: the count past the policies says nothing');
select throws_ok($$select app.require_notes_caller()$$, 'PTMFA', null, 'aal1: the notes opening statement refuses');
select lives_ok($$select app.require_active_caller()$$, 'aal1: the user record and a sign-out are reachable');
reset role;
select throws_ok($$select app.require_full_caller()$$, 'PTMFA', null, 'aal1: so are no account calls');

set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "f0f00000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "f0f00000-0000-4000-8000-0000000000b2"}', true);
select lives_ok($$select app.require_notes_caller()$$, 'aal2: the notes opening statement lets the caller in');
select is((select count(*)::int from public.notes), 1, 'aal2: the caller reads its note');
reset role;

-- Codes: a step is accepted once; a later one is accepted; five wrong codes lock the factor for the right one too.
select is((app.attempt_second_factor('f0f00000-0000-4000-8000-0000000000a1', null, 1000, null, null, null)).outcome,
  'accepted', 'a fresh step is accepted');
select is((app.attempt_second_factor('f0f00000-0000-4000-8000-0000000000a1', null, 1000, null, null, null)).outcome,
  'wrong', 'the same step again is refused');
select is((app.attempt_second_factor('f0f00000-0000-4000-8000-0000000000a1', null, 1001, null, null, null)).outcome,
  'accepted', 'the next step is accepted');
select is(
  (select array_agg((app.attempt_second_factor('f0f00000-0000-4000-8000-0000000000a1', null, null, null, null,
                                              null)).outcome) from generate_series(1, 5)),
  array['wrong', 'wrong', 'wrong', 'wrong', 'wrong'], 'five wrong codes are refused');
select is((app.attempt_second_factor('f0f00000-0000-4000-8000-0000000000a1', null, 1002, null, null, null)).outcome,
  'locked', 'then the factor refuses the right code too');

select * from finish();
rollback;
