-- Reset requests are recorded, not acted on, while the client waits. Acting on one (look the email
-- up, take a mail slot, store a code, queue its mail) is work only a known email gets, and its
-- extra milliseconds told an observer which emails have accounts. Now every request costs the same
-- insert, and the mail drainers resolve the queue after the answer has gone: known emails get a code
-- and a mail through app.request_password_reset, unknown ones are dropped.
-- Requests are also limited per client address (bucket 'reset-request-address').

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'signup-address', 'reset-address', 'reset-code-account', 'reset-request-address',
  'refresh-address', 'verify-address'
));
comment on column app.rate_limits.bucket is
  'login-address: logins per client address; login-failure: logins per (email, address) not followed by a success; signup-address: registers per address; reset-address: create-password calls per address; reset-code-account: wrong reset codes per account; reset-request-address: request-password-reset calls per address; refresh-address: session refreshes per address; verify-address: verify-email and resend-verification calls per address.';

create table app.password_reset_requests (
  id bigint generated always as identity primary key,
  email text not null check (char_length(email) <= 320),
  requested_at timestamptz not null default now()
);
comment on table app.password_reset_requests is
  'Reset requests not yet resolved by a mail drainer; each is deleted as it is taken.';
revoke all on table app.password_reset_requests from public, anon, authenticated;

-- Resolves up to cardinality(codes) of the oldest requests in one transaction: each is deleted and
-- handed to app.request_password_reset with the code and mail body of its position, so a drainer that
-- dies half-way leaves the requests queued. Concurrent drainers skip each other's rows.
create function app.resolve_password_reset_requests(
  codes text[],
  mail_bodies text[],
  code_ttl_minutes integer,
  code_attempts integer,
  min_interval_seconds integer,
  mails_per_hour integer,
  mail_subject text
) returns integer
language plpgsql
set search_path = ''
as $$
declare
  taken text[];
begin
  with t as (
    delete from app.password_reset_requests r
    where r.id in (
      select q.id from app.password_reset_requests q order by q.id limit cardinality(codes) for update skip locked
    )
    returning r.id, r.email
  )
  select coalesce(array_agg(t.email order by t.id), '{}') into taken from t;
  for i in 1 .. cardinality(taken) loop
    perform app.request_password_reset(
      taken[i], codes[i], code_ttl_minutes, code_attempts, min_interval_seconds, mails_per_hour,
      mail_subject, mail_bodies[i]
    );
  end loop;
  return cardinality(taken);
end;
$$;
comment on function app.resolve_password_reset_requests(text[], text[], integer, integer, integer, integer, text) is
  'Takes the oldest reset requests (one per given code) and resolves each with app.request_password_reset; returns how many.';
revoke all on function app.resolve_password_reset_requests(text[], text[], integer, integer, integer, integer, text)
  from public, anon, authenticated;
