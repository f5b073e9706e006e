-- The security audit log: written by triggers in the same transaction as the change, append-only for
-- every role the functions use (the owner included), pruned only past a day, and out of the Data API's reach.
begin;
create extension if not exists pgtap with schema extensions;
set local search_path = public, extensions;

select plan(12);

insert into app.users (id, name, email, password_hash) values
  ('a0d1e000-0000-4000-8000-000000000001', 'Eve', 'eve@example.test', 'not-a-real-hash');
select * from app.start_session('a0d1e000-0000-4000-8000-000000000001', 60, 60, 'pgtap', '192.0.2.1');

select results_eq(
  $$select type from app.security_events where user_id = 'a0d1e000-0000-4000-8000-000000000001' order by id$$,
  array['registered', 'session_started'],
  'a sign-up and a session are recorded by the triggers, in the same transaction'
);

-- An admin statement names itself; its changes record it as the actor, with its client.
select set_config('app.audit_actor', 'a0d1e000-0000-4000-8000-0000000000ad', true),
       set_config('app.audit_address', '198.51.100.9', true);
update app.users set status = 'SUSPENDED' where id = 'a0d1e000-0000-4000-8000-000000000001';
select results_eq(
  $$select type, actor_id::text, address from app.security_events
    where user_id = 'a0d1e000-0000-4000-8000-000000000001' and type in ('account_suspended', 'session_ended')
    order by id$$,
  $$values ('account_suspended', 'a0d1e000-0000-4000-8000-0000000000ad', '198.51.100.9'),
           ('session_ended', 'a0d1e000-0000-4000-8000-0000000000ad', '192.0.2.1')$$,
  'a suspension and the sessions it ends name the admin as actor'
);

select throws_ok(
  $$update app.security_events set type = 'registered'$$, '42501', 'security events are append-only',
  'the functions'' role (the owner) cannot rewrite an event'
);
select throws_ok(
  $$delete from app.security_events$$, '42501', 'security events are append-only',
  'nor delete one'
);
select throws_ok($$truncate app.security_events$$, '42501', null, 'nor truncate the log');
select set_config('app.audit_pruning', 'on', true);
select throws_ok(
  $$delete from app.security_events$$, '42501', 'security events are append-only',
  'naming itself the pruner does not let a statement delete an event younger than a day'
);
select throws_ok($$select app.prune_security_events(0, 10)$$, '22023', null, 'the retention is at least a day');

insert into app.security_events (at, type, user_id) values
  (now() - interval '40 days', 'login_failed', 'a0d1e000-0000-4000-8000-000000000001');
select is(app.prune_security_events(30, 10), 1, 'pruning deletes the events past the retention');

select throws_ok(
  $$insert into app.security_events (type, user_id, details)
    values ('login_failed', 'a0d1e000-0000-4000-8000-000000000001', '{"password": "hunter2"}')$$,
  '23514', null,
  'an event cannot carry a key named like a secret'
);

select ok(
  not has_table_privilege('authenticated', 'app.security_events', 'select')
    and not has_table_privilege('anon', 'app.security_events', 'select'),
  'neither authenticated nor anon can read the log'
);
select ok(
  not has_function_privilege('authenticated', 'app.record_security_event(text, uuid, uuid, text, text, jsonb)', 'execute')
    and not has_function_privilege('authenticated', 'app.require_admin()', 'execute'),
  'authenticated can neither write events nor call the admin check'
);

set local role authenticated;
set local request.jwt.claims = '{"sub":"a0d1e000-0000-4000-8000-000000000001","role":"authenticated"}';
select throws_ok($$select * from app.security_events$$, '42501', null,
  'authenticated cannot read the log, not even its own events (the API serves them)');

select * from finish();
rollback;
