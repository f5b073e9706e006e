-- An anonymous account signs up with a code mailed to its address (issue 48): no password to make up.
--
-- 1. POST /auth/anonymous/upgrade/code {email} (the anonymous session): app.request_upgrade_code refuses an address
--    that has an account ('email_taken', as the password upgrade does) and otherwise stores an 8-digit code (its HMAC,
--    made by the functions) for the anonymous account and that address, good for 10 minutes, ending the account's
--    last one, and queues its mail. The verification mails' limits hold per anonymous account and per address (one a
--    minute, mails_per_day a day), so many anonymous accounts cannot flood one mailbox.
-- 2. POST /auth/anonymous/upgrade/verify {email, code, name}: app.upgrade_anonymous_with_code checks it, wrong codes
--    counting per address as sign-in codes do (10 an hour, bucket 'sign-in-code-email'), and gives the account the
--    name and the address, verified by the code, with no password, under the same id (so every note stays). An
--    address registered meanwhile is 'email_taken' and nothing changes, the code included. No password changes, so
--    no session ends: the anonymous session goes on as the real account.

create table app.upgrade_codes (
  user_id uuid primary key references app.users (id) on delete cascade,
  email text not null,
  code_hash text not null,
  expires_at timestamptz not null,
  sent_at timestamptz not null default now(),
  day_started_at timestamptz not null default now(),
  sent_in_day integer not null default 1
);
create index upgrade_codes_email on app.upgrade_codes (email, sent_at);
comment on table app.upgrade_codes is
  'At most one live code per anonymous account, for the address it would sign up with, as an HMAC made by the functions; also the account''s mail quota. Gone when the account signs up or is deleted.';
revoke all on table app.upgrade_codes from public, anon, authenticated;
alter table app.upgrade_codes enable row level security;

-- Every upgrade code mailed, by address, for a day: the address's quota. It cannot live in app.upgrade_codes, whose one
-- row per account moves to whatever address the account asks for last, so accounts taking turns between a victim's
-- address and another would never be counted against the victim's.
create table app.upgrade_code_mails (
  email text not null,
  sent_at timestamptz not null default now()
);
create index upgrade_code_mails_email on app.upgrade_code_mails (email, sent_at);
comment on table app.upgrade_code_mails is
  'Each upgrade code mailed in the last day, by address: the per-address quota of app.request_upgrade_code.';
revoke all on table app.upgrade_code_mails from public, anon, authenticated;
alter table app.upgrade_code_mails enable row level security;

-- Answers 'sent', 'throttled' (a mail quota), 'email_taken' or 'not_anonymous'.
create function app.request_upgrade_code(
  owner uuid,
  target_email text,
  new_code_hash text,
  code_ttl_minutes integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text,
  mail_body text
) returns text
language plpgsql
set search_path = ''
as $$
begin
  perform from app.users u where u.id = owner and u.is_anonymous for update;
  if not found then
    return 'not_anonymous';
  end if;
  if exists (select from app.users u where u.email = target_email) then
    return 'email_taken';
  end if;
  -- The address's quota, across every anonymous account that asked for it, from the mails sent to it (under the
  -- address's lock, so concurrent requests count one after another); a day's older ones go.
  perform app.lock_rate_limit_keys('upgrade-code-email ' || target_email);
  delete from app.upgrade_code_mails m where m.email = target_email and m.sent_at <= now() - interval '1 day';
  if exists (
       select from app.upgrade_code_mails m
       where m.email = target_email and m.sent_at > now() - make_interval(secs => min_interval_seconds)
     )
     or (select count(*) from app.upgrade_code_mails m where m.email = target_email) >= mails_per_day then
    return 'throttled';
  end if;
  insert into app.upgrade_codes as c (user_id, email, code_hash, expires_at)
  values (owner, target_email, new_code_hash, now() + make_interval(mins => code_ttl_minutes))
  on conflict (user_id) do update set
    email = excluded.email,
    code_hash = excluded.code_hash,
    expires_at = excluded.expires_at,
    sent_at = now(),
    day_started_at = case when c.day_started_at <= now() - interval '1 day' then now() else c.day_started_at end,
    sent_in_day = case when c.day_started_at <= now() - interval '1 day' then 1 else c.sent_in_day + 1 end
    where c.sent_at <= now() - make_interval(secs => min_interval_seconds)
      and (c.day_started_at <= now() - interval '1 day' or c.sent_in_day < mails_per_day);
  if not found then
    return 'throttled';
  end if;
  insert into app.upgrade_code_mails (email) values (target_email);
  insert into app.mail_outbox (recipient, subject, body) values (target_email, mail_subject, mail_body);
  return 'sent';
end;
$$;
comment on function app.request_upgrade_code(uuid, text, text, integer, integer, integer, text, text) is
  'Stores an anonymous account''s code to sign up with target_email (its HMAC) and queues its mail, within the per-account and per-address quotas; refuses an address that has an account.';
revoke all on function app.request_upgrade_code(uuid, text, text, integer, integer, integer, text, text)
  from public, anon, authenticated;

-- The outcome: 'throttled', 'bad-code', 'email_taken', 'not_anonymous' or 'upgraded' with the account.
create function app.upgrade_anonymous_with_code(
  owner uuid,
  target_email text,
  presented_hash text,
  new_name text,
  max_wrong_codes integer,
  wrong_codes_window_seconds integer
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
  is_anonymous boolean,
  created_at timestamptz,
  updated_at timestamptz,
  token_version integer
)
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  code_matches boolean;
  wait integer;
begin
  -- Locked first, as app.sign_in_with_code does, so concurrent guesses are counted one after another.
  perform app.lock_rate_limit_keys('sign-in-code-email ' || target_email);
  wait := app.rate_limit_wait('sign-in-code-email', target_email, max_wrong_codes);
  if wait > 0 then
    return query select 'throttled', wait, null::uuid, null, null, null, null, null, null::boolean, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  perform from app.users u where u.id = owner and u.is_anonymous for update;
  if not found then
    return query select 'not_anonymous', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  -- Both sides are HMACs under a key only the functions hold, as for sign-in codes.
  select c.code_hash = presented_hash and c.email = target_email into code_matches
  from app.upgrade_codes c
  where c.user_id = owner and c.expires_at > now()
  for update;
  if not coalesce(code_matches, false) then
    perform app.count_rate_limit_hit('sign-in-code-email', target_email, wrong_codes_window_seconds);
    return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;
  begin
    update app.users u
    set name = new_name, email = target_email, is_verified = true, is_anonymous = false, updated_at = now()
    where u.id = owner
    returning * into account;
  exception when unique_violation then
    -- Registered since the code was mailed: the account stays anonymous with its notes, and its code stays live.
    return query select 'email_taken', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::boolean, null::timestamptz, null::timestamptz, null::integer;
    return;
  end;
  delete from app.upgrade_codes c where c.user_id = owner;
  return query
    select 'upgraded', null::integer, account.id, account.name, account.phone_number, account.email, account.role,
           account.status, account.is_verified, account.is_anonymous, account.created_at, account.updated_at,
           account.token_version;
end;
$$;
comment on function app.upgrade_anonymous_with_code(uuid, text, text, text, integer, integer) is
  'Signs an anonymous account up with the code mailed to target_email (its HMAC): the same id, the address verified, no password; a wrong code counts against the address; a taken address changes nothing.';
revoke all on function app.upgrade_anonymous_with_code(uuid, text, text, text, integer, integer)
  from public, anon, authenticated;
