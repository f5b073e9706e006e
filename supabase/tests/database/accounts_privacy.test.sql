-- Credentials, reset codes and queued mails live in schema app, out of the
-- Data API's reach: neither anon nor authenticated can read or change them.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(13);

insert into app.users (id, name, email, password_hash) values
  ('dade0000-0000-4000-8000-000000000001', 'Dave', 'dave@example.test', 'not-a-real-hash');
insert into app.password_reset_codes (user_id, code_hash, expires_at, attempts_left) values
  ('dade0000-0000-4000-8000-000000000001', 'not-a-real-hash', now() + interval '15 minutes', 5);
insert into app.mail_outbox (recipient, subject, body) values ('dave@example.test', 'Your code', '123456');

select tables_are('public', array['notes', 'note_tombstones', 'attachments'],
  'the only tables in the exposed schema public are notes, their tombstones and their attachments');
select ok(not has_schema_privilege('anon', 'app', 'usage'), 'anon cannot even look into schema app');
select is_empty(
  $$select c.oid::regclass::text, r.role
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    cross join (values ('anon'), ('authenticated')) as r (role)
    where n.nspname = 'app' and c.relkind in ('r', 'v', 'm', 'p', 'f')
      and (has_table_privilege(r.role, c.oid, 'select, insert, update, delete, truncate, references, trigger')
        or has_any_column_privilege(r.role, c.oid, 'select, insert, update, references'))$$,
  'no table in schema app grants anything to anon or authenticated, on the table or on a column'
);
select is_empty(
  $$select p.oid::regprocedure::text
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('app', 'public') and has_function_privilege('anon', p.oid, 'execute')$$,
  'anon can execute no function of schemas app and public'
);
select is(
  array(
    select p.proname::text
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app' and has_function_privilege('authenticated', p.oid, 'execute')
    order by 1
  ),
  array['caller_change_position', 'caller_is_active', 'caller_note_count', 'caller_note_count',
        'caller_note_create_key', 'caller_note_matches', 'caller_reaches_notes', 'caller_verified_as_required',
        'claim_note_create_key',
        'create_note_once', 'delete_note_version', 'require_active_caller', 'require_notes_caller',
        'require_notes_writer', 'save_note_version'],
  'authenticated can execute only the checks its policies, listing, search and changes feed use (the writers'' ' ||
  'one locking its account first), its own create keys and its versioned writes: no rate limit, reset, mail, ' ||
  'numbering, pruning or second-factor function'
);

set local role authenticated;
set local request.jwt.claims = '{"sub":"dade0000-0000-4000-8000-000000000001","role":"authenticated","token_version":0}';
select throws_ok($$select password_hash from app.users$$, '42501', null,
  'authenticated, even as the account itself, cannot read password hashes');
select throws_ok($$select code_hash from app.password_reset_codes$$, '42501', null,
  'authenticated cannot read reset codes');
select throws_ok($$select body from app.mail_outbox$$, '42501', null,
  'authenticated cannot read queued mails, which carry reset codes');
select throws_ok($$update app.users set password_hash = 'chosen' where id = auth.uid()$$, '42501', null,
  'authenticated cannot set a password hash directly');

reset role;
set local role anon;
set local request.jwt.claims = '{"role":"anon"}';
select throws_ok($$select password_hash from app.users$$, '42501', null, 'anon cannot read password hashes');
select throws_ok($$select code_hash from app.password_reset_codes$$, '42501', null, 'anon cannot read reset codes');
select throws_ok($$select body from app.mail_outbox$$, '42501', null, 'anon cannot read queued mails');
select throws_ok(
  $$insert into app.password_reset_codes (user_id, code_hash, expires_at, attempts_left)
    values ('dade0000-0000-4000-8000-000000000001', 'x', now(), 5)$$,
  '42501', null,
  'anon cannot plant a reset code'
);

select * from finish();
rollback;
