-- Sign-up with an emailed code (issue 48, OTP_SIGN_UP). With the setting off (the default) nothing changes: a request
-- for an unknown address stores and mails nothing, and a code for it is the same 'bad-code' as a wrong one, so the
-- answers tell known and unknown addresses apart no more than before. With it on (the functions pass sign_up true):
--
-- - a request for an address no account holds stores a code for the address itself (app.sign_up_codes: 8 digits, 10
--   minutes, a new one ends the last, within the same mail quota as an account's code) and mails it;
-- - app.sign_in_with_code, given a right code for such an address, creates the account, verified by the code, with no
--   password and the name given (else the address's local part), and signs it in ('registered'); the code is used up.
--   Wrong codes count against the address as for a known one. An address registered meanwhile is that account's: a
--   sign-up code does not sign in to it ('bad-code'), as it never proved the address to that account.

create table app.sign_up_codes (
  email text primary key,
  -- Null once used: the row keeps the address's mail quota.
  code_hash text,
  expires_at timestamptz not null,
  sent_at timestamptz not null default now(),
  day_started_at timestamptz not null default now(),
  sent_in_day integer not null default 1
);
comment on table app.sign_up_codes is
  'With OTP_SIGN_UP, at most one live code per address no account holds, as an HMAC made by the functions; a right use creates the account. Also the address''s sign-up mail quota.';
revoke all on table app.sign_up_codes from public, anon, authenticated;
alter table app.sign_up_codes enable row level security;

drop function app.request_sign_in_code(text, text, integer, integer, integer, text, text);
create function app.request_sign_in_code(
  target_email text,
  new_code_hash text,
  code_ttl_minutes integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text,
  mail_body text,
  sign_up boolean default false
) returns void
language plpgsql
set search_path = ''
as $$
declare
  target app.users%rowtype;
begin
  select * into target from app.users u where u.email = target_email for update;
  if found and target.status = 'ACTIVE' then
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
  elsif not found and sign_up then
    insert into app.sign_up_codes as c (email, code_hash, expires_at)
    values (target_email, new_code_hash, now() + make_interval(mins => code_ttl_minutes))
    on conflict (email) do update set
      code_hash = excluded.code_hash,
      expires_at = excluded.expires_at,
      sent_at = now(),
      day_started_at = case when c.day_started_at <= now() - interval '1 day' then now() else c.day_started_at end,
      sent_in_day = case when c.day_started_at <= now() - interval '1 day' then 1 else c.sent_in_day + 1 end
      where c.sent_at <= now() - make_interval(secs => min_interval_seconds)
        and (c.day_started_at <= now() - interval '1 day' or c.sent_in_day < mails_per_day);
  else
    return;
  end if;
  if found then
    insert into app.mail_outbox (recipient, subject, body) values (target_email, mail_subject, mail_body);
  end if;
end;
$$;
comment on function app.request_sign_in_code(text, text, integer, integer, integer, text, text, boolean) is
  'Replaces a known, active account''s sign-in code (its HMAC), or with sign_up an unknown address''s sign-up code, and queues its mail, within the per-address mail quota; nothing otherwise.';
revoke all on function app.request_sign_in_code(text, text, integer, integer, integer, text, text, boolean)
  from public, anon, authenticated;

drop function app.resolve_sign_in_code_requests(text[], text[], integer, integer, integer, text);
create function app.resolve_sign_in_code_requests(
  code_hashes text[],
  mail_bodies text[],
  code_ttl_minutes integer,
  min_interval_seconds integer,
  mails_per_day integer,
  mail_subject text,
  sign_up boolean default false
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
      taken[i], code_hashes[i], code_ttl_minutes, min_interval_seconds, mails_per_day, mail_subject, mail_bodies[i],
      sign_up
    );
  end loop;
  -- Sign-up codes past their time and their day's quota hold nothing any more.
  delete from app.sign_up_codes c where c.expires_at <= now() and c.day_started_at <= now() - interval '1 day';
  return cardinality(taken);
end;
$$;
comment on function app.resolve_sign_in_code_requests(text[], text[], integer, integer, integer, text, boolean) is
  'Takes the oldest sign-in code requests (one per given code hash) and resolves each with app.request_sign_in_code; returns how many.';
revoke all on function app.resolve_sign_in_code_requests(text[], text[], integer, integer, integer, text, boolean)
  from public, anon, authenticated;

drop function app.sign_in_with_code(text, text, integer, integer, integer, text, text);
-- The outcome: 'throttled', 'bad-code', 'suspended', 'signed-in' or, with sign_up, 'registered'. An unknown address
-- is a 'bad-code' unless sign_up and its sign-up code match, counted as a known one's.
create function app.sign_in_with_code(
  target_email text,
  presented_hash text,
  max_wrong_codes integer,
  wrong_codes_window_seconds integer,
  recent_identity_days integer,
  client_address text,
  client_user_agent text,
  sign_up boolean default false,
  new_name text default null
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
  -- Wrong codes count per address, across every code asked for: a new code starts no new count. The address's key
  -- is locked first, so concurrent guesses are counted one after another and none passes a count it did not see.
  perform app.lock_rate_limit_keys('sign-in-code-email ' || target_email);
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
  elsif sign_up then
    select c.code_hash = presented_hash into code_matches
    from app.sign_up_codes c
    where c.email = target_email and c.code_hash is not null and c.expires_at > now()
    for update;
  end if;

  if not coalesce(code_matches, false) then
    perform app.count_rate_limit_hit('sign-in-code-email', target_email, wrong_codes_window_seconds);
    return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                        null::timestamptz, null::timestamptz, null::integer;
    return;
  end if;

  if target.id is null then
    -- Each code works once; the code proved the address, so the new account is verified.
    update app.sign_up_codes c set code_hash = null where c.email = target_email;
    begin
      insert into app.users (name, email, password_hash, is_verified)
      values (coalesce(new_name, left(split_part(target_email, '@', 1), 200)), target_email, null, true)
      returning * into target;
    exception when unique_violation then
      -- A registration of the address committed meanwhile: it is that account's, which this code never proved.
      return query select 'bad-code', null::integer, null::uuid, null, null, null, null, null, null::boolean,
                          null::timestamptz, null::timestamptz, null::integer;
      return;
    end;
    return query
      select 'registered', null::integer, target.id, target.name, target.phone_number, target.email, target.role,
             target.status, target.is_verified, target.created_at, target.updated_at, target.token_version;
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
comment on function app.sign_in_with_code(text, text, integer, integer, integer, text, text, boolean, text) is
  'Signs in with a sign-in code (its HMAC): a right code is used up, proves the address and, on an unproven one, reclaims the account; with sign_up, a right code for an address no account holds creates its account, verified; a wrong one (or any for an unknown address without sign_up) counts against the address.';
revoke all on function app.sign_in_with_code(text, text, integer, integer, integer, text, text, boolean, text)
  from public, anon, authenticated;
