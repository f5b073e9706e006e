-- Anonymous accounts as Postgres enforces them: an anonymous account's notes are capped whatever route inserts them
-- (here, the Data API's role with its claims) and REQUIRE_EMAIL_VERIFICATION does not hold them back, it adds no
-- second factor or passkey, only an anonymous account is
-- merged or swept, and the merge moves the notes with their totals. What the functions answer is tested over HTTP in
-- tests/anonymous.test.ts.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(22);

update app.settings set anonymous_note_limit = 2, require_email_verification = true;
insert into app.users (id, name, is_anonymous) values
  ('a0000000-0000-4000-8000-0000000000a1', 'Anonymous', true),
  ('a0000000-0000-4000-8000-0000000000a2', 'Anonymous', true);
insert into app.users (id, name, email, password_hash, is_verified) values
  ('a0000000-0000-4000-8000-0000000000b1', 'Real', 'real-anonymous-test@example.test', 'not-a-real-hash', true);
insert into app.sessions (id, user_id, expires_at) values
  ('a0000000-0000-4000-8000-0000000000c1', 'a0000000-0000-4000-8000-0000000000a1', now() + interval '1 hour');

select throws_ok($$insert into app.users (name) values ('No email, not anonymous')$$, '23514', null,
  'only an anonymous account has no email');
select throws_ok($$insert into app.second_factors (user_id, secret_sealed, secret_key_id)
                   values ('a0000000-0000-4000-8000-0000000000a1', 'sealed', 'k1')$$,
  'PT403', 'anonymous_account', 'an anonymous account adds no second factor');

-- Through the Data API's role, with the anonymous user's claims.
set local role authenticated;
select set_config('request.jwt.claims', '{"sub": "a0000000-0000-4000-8000-0000000000a1", "role": "authenticated", ' ||
  '"session_id": "a0000000-0000-4000-8000-0000000000c1", "is_anonymous": false}', true);
select lives_ok($$insert into public.notes (created_by, title) values
                  ('a0000000-0000-4000-8000-0000000000a1', 'one'), ('a0000000-0000-4000-8000-0000000000a1', 'two')$$,
  'an anonymous account writes notes up to the cap, though verified addresses are required: it has none to verify');
select is((select count(*)::integer from public.notes), 2, 'and reads them');
select throws_ok($$insert into public.notes (created_by, title) values ('a0000000-0000-4000-8000-0000000000a1', 'three')$$,
  'PT403', 'anonymous_note_limit', 'the note past the cap is refused, whatever the claims say');
reset role;

-- A real account is not capped.
select lives_ok($$insert into public.notes (created_by, title)
                  select 'a0000000-0000-4000-8000-0000000000b1', 'n' || i from generate_series(1, 3) i$$,
  'a real account writes past the anonymous cap');

-- The merge: a real account's token is refused, the anonymous one's notes move once.
select is((select outcome from app.merge_anonymous_account('a0000000-0000-4000-8000-0000000000a1',
            'a0000000-0000-4000-8000-0000000000b1', 'a0000000-0000-4000-8000-0000000000c1', 0)),
  'not_anonymous', 'a real account is never merged away');
select is((select outcome from app.merge_anonymous_account('a0000000-0000-4000-8000-0000000000a2',
            'a0000000-0000-4000-8000-0000000000a1', 'a0000000-0000-4000-8000-0000000000c1', 0)),
  'target_anonymous', 'nothing merges into an anonymous account, where it would pass the note cap');
select is((select row(outcome, moved)::text from app.merge_anonymous_account('a0000000-0000-4000-8000-0000000000b1',
            'a0000000-0000-4000-8000-0000000000a1', 'a0000000-0000-4000-8000-0000000000c1', 0)),
  '(merged,2)', 'the anonymous account''s notes move');
select is((select notes from app.note_counts where user_id = 'a0000000-0000-4000-8000-0000000000b1'), 5,
  'the new owner''s total counts them');
select is((select count(*)::integer from app.users where id = 'a0000000-0000-4000-8000-0000000000a1'), 0,
  'the anonymous account is deleted');
select is((select row(outcome, moved)::text from app.merge_anonymous_account('a0000000-0000-4000-8000-0000000000b1',
            'a0000000-0000-4000-8000-0000000000a1', 'a0000000-0000-4000-8000-0000000000c1', 0)),
  '(gone,0)', 'a retry moves nothing');

-- The upgrade by an emailed code: no code for a taken address or a real account; a code is its address's only, and
-- signs the account up under the same id, verified.
insert into app.users (id, name, is_anonymous) values ('a0000000-0000-4000-8000-0000000000a3', 'Anonymous', true);
select function_privs_are('app', 'upgrade_anonymous_with_code',
  array['uuid', 'text', 'text', 'text', 'integer', 'integer'], 'authenticated', array[]::text[],
  'authenticated cannot sign an account up with a code');
select table_privs_are('app', 'upgrade_codes', 'authenticated', array[]::text[],
  'authenticated cannot touch the upgrade codes');
select is(app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a3', 'real-anonymous-test@example.test',
  'hash-u', 10, 60, 5, 'subject', 'body'), 'email_taken', 'an address that has an account gets no code');
select is(app.request_upgrade_code('a0000000-0000-4000-8000-0000000000b1', 'new-anonymous-test@example.test',
  'hash-u', 10, 60, 5, 'subject', 'body'), 'not_anonymous', 'a real account gets no code');
select is(app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a3', 'new-anonymous-test@example.test',
  'hash-u', 10, 60, 5, 'subject', 'body'), 'sent', 'a new address gets one');
select is((select outcome from app.upgrade_anonymous_with_code('a0000000-0000-4000-8000-0000000000a3',
            'other-anonymous-test@example.test', 'hash-u', 'Una', 10, 3600)),
  'bad-code', 'the code works for its own address only');
select is((select row(outcome, email, is_anonymous, is_verified)::text from app.upgrade_anonymous_with_code(
            'a0000000-0000-4000-8000-0000000000a3', 'new-anonymous-test@example.test', 'hash-u', 'Una', 10, 3600)),
  '(upgraded,new-anonymous-test@example.test,f,t)', 'the right code signs the account up, verified, keeping its id');

-- The address's mail quota counts the mails sent to it, however many accounts asked and wherever they moved since:
-- two accounts each mail the victim and then another address (2 a day allowed), and a third finds the victim's quota
-- spent.
insert into app.users (id, name, is_anonymous) values
  ('a0000000-0000-4000-8000-0000000000a4', 'Anonymous', true),
  ('a0000000-0000-4000-8000-0000000000a5', 'Anonymous', true),
  ('a0000000-0000-4000-8000-0000000000a6', 'Anonymous', true);
select app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a4', 'victim-anonymous-test@example.test',
  'hash-v', 10, 0, 2, 'subject', 'body');
select app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a4', 'elsewhere-1-anonymous-test@example.test',
  'hash-v', 10, 0, 2, 'subject', 'body');
select app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a5', 'victim-anonymous-test@example.test',
  'hash-v', 10, 0, 2, 'subject', 'body');
select app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a5', 'elsewhere-2-anonymous-test@example.test',
  'hash-v', 10, 0, 2, 'subject', 'body');
select is(app.request_upgrade_code('a0000000-0000-4000-8000-0000000000a6', 'victim-anonymous-test@example.test',
  'hash-v', 10, 0, 2, 'subject', 'body'), 'throttled', 'an address''s quota holds when its askers move elsewhere');

-- The sweep: only anonymous accounts unused past the days given.
update app.users set created_at = now() - interval '31 days'
where id in ('a0000000-0000-4000-8000-0000000000a2', 'a0000000-0000-4000-8000-0000000000b1');
select ok(app.delete_unused_anonymous_accounts(30, 1000) >= 1, 'the sweep deletes an unused anonymous account');
select is((select array_agg(id::text order by id) from app.users where id in
            ('a0000000-0000-4000-8000-0000000000a2', 'a0000000-0000-4000-8000-0000000000b1')),
  array['a0000000-0000-4000-8000-0000000000b1'], 'and leaves the old real account');

select * from finish();
rollback;
