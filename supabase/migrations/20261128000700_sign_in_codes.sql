-- Sign-in with a code sent by email (POST /auth/otp, POST /auth/otp/verify). Only codes, no links.
--
-- 1. A request is queued (app.sign_in_code_requests), the same single insert for a known and an unknown address, and
--    the mail drainers resolve it (app.request_sign_in_code): a known, active account gets a new 8-digit code (its
--    HMAC, made by the functions under a key derived from JWT_SECRET, as reset codes are) valid for 10 minutes, which
--    ends its previous one, within the verification mails' limits (one a minute, VERIFICATION_MAILS_PER_DAY a day).
--    Nothing is sent for an unknown address: codes never create accounts.
-- 2. A code is checked in app.sign_in_with_code: wrong codes count per address (the email, known or not) across every
--    code asked for, 10 an hour; a right code works once. It proves the address: the account is marked verified and,
--    when the address was unproven until then, given back to its owner as a reset gives it back
--    (app.reclaim_account): the pre-registrant's password, factor, passkeys and identities go, and every session ends.
--    A factor the owner enrolled on a proven address still applies: the session starts at aal1.

create table app.sign_in_code_requests (
  id bigint generated always as identity primary key,
  email text not null,
  created_at timestamptz not null default now()
);
comment on table app.sign_in_code_requests is
  'Sign-in code requests waiting for the mail drainers, known address or not; resolved by app.resolve_sign_in_code_requests.';
revoke all on table app.sign_in_code_requests from public, anon, authenticated;
alter table app.sign_in_code_requests enable row level security;

create table app.sign_in_codes (
  user_id uuid primary key references app.users (id) on delete cascade,
  -- Null once used: the row keeps the account's mail quota.
  code_hash text,
  expires_at timestamptz not null,
  sent_at timestamptz not null default now(),
  day_started_at timestamptz not null default now(),
  sent_in_day integer not null default 1
);
comment on table app.sign_in_codes is
  'At most one live sign-in code per account, as an HMAC made by the functions; a new one replaces it, a right use clears it. Also the account''s sign-in mail quota.';
revoke all on table app.sign_in_codes from public, anon, authenticated;
alter table app.sign_in_codes enable row level security;

alter table app.rate_limits drop constraint rate_limits_bucket_check;
alter table app.rate_limits add constraint rate_limits_bucket_check check (bucket in (
  'login-address', 'login-failure', 'login-account', 'login-device', 'signup-address', 'reset-address',
  'reset-code-account', 'reset-request-address', 'refresh-address', 'verify-address', 'reentry-session',
  'oauth-address', 'passkey-address', 'sign-in-code-email'
));

alter table app.sessions drop constraint sessions_signed_in_with_check;
alter table app.sessions add constraint sessions_signed_in_with_check
  check (signed_in_with in ('password', 'provider', 'passkey', 'email_code'));

-- Stores a new code for a known, active account and queues its mail within the quota; nothing otherwise.
create function app.request_sign_in_code(
  target_email text,
  new_code_hash text,
  code_ttl_minutes integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text,
  mail_body text
) returns void
language plpgsql
set search_path = ''
as $$
declare
  target app.users%rowtype;
begin
  select * into target from app.users u where u.email = target_email for update;
  if not found or target.status <> 'ACTIVE' then
    return;
  end if;
  -- Over quota the old code stays live: a code nobody was sent would only end the one its owner holds.
  insert into app.sign_in_codes as c (user_id, code_hash, expires_at)
  values (target.id, new_code_hash, now() + make_interval(mins => code_ttl_minutes))
  on conflict (user_id) do update set
    code_hash = excluded.code_hash,
    expires_at = excluded.expires_at,
    sent_at = now(),
    day_started_at = case when c.day_started_at <= now() - interval '1 day' then now() else c.day_started_at end,
    sent_in_day = case when c.day_started_at <= now() - interval '1 day' then 1 else c.sent_in_day + 1 end
    where c.sent_at <= now() - make_interval(secs => min_interval_seconds)
      and (c.day_started_at <= now() - interval '1 day' or c.sent_in_day < mails_per_day);
  if found then
    insert into app.mail_outbox (recipient, subject, body) values (target.email, mail_subject, mail_body);
  end if;
end;
$$;
comment on function app.request_sign_in_code(text, text, integer, integer, integer, text, text) is
  'Replaces a known, active account''s sign-in code (its HMAC) and queues its mail, within the per-account mail quota; nothing for an unknown or suspended address.';
revoke all on function app.request_sign_in_code(text, text, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- Resolves up to cardinality(code_hashes) of the oldest requests, each with the code and mail body of its position.
create function app.resolve_sign_in_code_requests(
  code_hashes text[],
  mail_bodies text[],
  code_ttl_minutes integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text
) returns integer
language plpgsql
set search_path = ''
as $$
declare
  taken text[];
begin
  with t as (
    delete from app.sign_in_code_requests r
    where r.id in (
      select q.id from app.sign_in_code_requests q order by q.id limit cardinality(code_hashes)
      for update skip locked
    )
    returning r.id, r.email
  )
  select coalesce(array_agg(t.email order by t.id), '{}') into taken from t;
  for i in 1 .. cardinality(taken) loop
    perform app.request_sign_in_code(
      taken[i], code_hashes[i], code_ttl_minutes, min_interval_seconds, mails_per_day, mail_subject, mail_bodies[i]
    );
  end loop;
  return cardinality(taken);
end;
$$;
comment on function app.resolve_sign_in_code_requests(text[], text[], integer, integer, integer, text) is
  'Takes the oldest sign-in code requests (one per given code hash) and resolves each with app.request_sign_in_code; returns how many.';
revoke all on function app.resolve_sign_in_code_requests(text[], text[], integer, integer, integer, text)
  from public, anon, authenticated;

-- The outcome: 'throttled', 'bad-code', 'suspended' or 'signed-in'. An unknown address is a 'bad-code', counted as
-- a known one's, so the answer tells them apart no more than the request's does.
create function app.sign_in_with_code(
  target_email text,
  presented_hash text,
  max_wrong_codes integer,
  wrong_codes_window_seconds integer,
  recent_identity_days integer,
  client_address text,
  client_user_agent text
) returns table (
  outcome text,
  retry_after integer,
  id uuid,
  name text,
  phone_number text,
  email text,
  role text,
  status text,
  is_verified boolean,
  created_at timestamptz,
  updated_at timestamptz,
  token_version integer
)
language plpgsql
set search_path = ''
as $$
declare
  target app.users%rowtype;
  code_matches boolean;
  wait integer;
begin
  -- Wrong codes count per address, across every code asked for: a new code starts no new count.
  wait := app.rate_limit_wait('sign-in-code-email', target_email, max_wrong_codes);
  if wait > 0 then
    return query select 'throttled', wait, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  select * into target from app.users u where u.email = target_email for update;
  if found then
    -- Both sides are HMACs under a key only the functions hold, as for reset codes: how long the comparison takes
    -- can say at most how much of an HMAC the caller cannot choose matched, nothing of the code.
    select c.code_hash = presented_hash into code_matches
    from app.sign_in_codes c
    where c.user_id = target.id and c.code_hash is not null and c.expires_at > now()
    for update;
  end if;

  if not coalesce(code_matches, false) then
    perform app.count_rate_limit_hit('sign-in-code-email', target_email, wrong_codes_window_seconds);
    return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  -- Each code works once.
  update app.sign_in_codes c set code_hash = null where c.user_id = target.id;
  if target.status = 'SUSPENDED' then
    return query select 'suspended', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  -- The owner proved the mailbox: the email's failed logins are lifted, as after a reset.
  delete from app.rate_limits r where r.bucket = 'login-failure' and r.email = target_email;
  delete from app.rate_limits r where r.bucket = 'login-account' and r.key = target_email;
  delete from app.email_verification_codes c where c.user_id = target.id;
  if target.is_verified then
    update app.users u set is_verified = true where u.id = target.id;
  else
    -- Until now the address was unproven: whoever registered it may not be its owner. Their password goes (which
    -- ends every session and voids every device token), and so does what they added (app.reclaim_account).
    update app.users u set is_verified = true, password_hash = null where u.id = target.id;
    perform app.reclaim_account(target.id, false, recent_identity_days, client_address, client_user_agent);
    -- The reclaim's mail speaks of a reset; this one was a sign-in, and the password went.
    update app.mail_outbox m
    set subject = 'You signed in with a code',
        body = replace(m.body, 'The password of your notes account was set with a code sent to this address',
                       'Your notes account was signed in to with a code sent to this address, its password removed')
    where m.id = (select max(o.id) from app.mail_outbox o
                  where o.recipient = target.email and o.subject = 'Your password was reset');
  end if;
  return query
    select 'signed-in', null::integer, u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
           u.created_at, u.updated_at, u.token_version
    from app.users u where u.id = target.id;
end;
$$;
comment on function app.sign_in_with_code(text, text, integer, integer, integer, text, text) is
  'Signs in with a sign-in code (its HMAC): a right code is used up, proves the address and, on an unproven one, reclaims the account; a wrong one (or any for an unknown address) counts against the address.';
revoke all on function app.sign_in_with_code(text, text, integer, integer, integer, text, text)
  from public, anon, authenticated;
