-- A code alone no longer verifies an address. Someone who registered another person's address with a password
-- of their own could wait for the owner to verify it with the mailed code, then sign in with that password and
-- read what the owner wrote (account pre-hijacking). Verifying now also takes the account's own proof: a live
-- session of the account (proven_user, checked by the caller's statement) or its password (the hash it was
-- checked against, proven_password_hash). An owner who never chose that password sets one with a reset code,
-- which proves the address and ends everything issued before it (app.reset_password, users_revoke_tokens).

drop function app.verify_email(text, text);

-- The outcome: 'unproven' (neither proof holds for the address's account, or no account), 'bad-code',
-- 'suspended' or 'verified'. An unproven request uses up no attempt of the code.
create function app.verify_email(
  target_email text,
  presented_hash text,
  proven_user uuid,
  proven_password_hash text
)
returns table (
  outcome text,
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
  code app.email_verification_codes%rowtype;
begin
  select * into target from app.users u where u.email = target_email for update;
  if not found or not (target.id = proven_user or target.password_hash = proven_password_hash) is true then
    return query select 'unproven', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  select * into code from app.email_verification_codes c where c.user_id = target.id for update;
  -- No code, an expired or burned one: the same answer as a wrong code.
  if code.user_id is null or code.expires_at <= now() or code.attempts_left <= 0 then
    return query select 'bad-code', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  if code.code_hash <> presented_hash then
    -- The statement commits, so the attempt stays used.
    update app.email_verification_codes c set attempts_left = c.attempts_left - 1 where c.user_id = target.id;
    return query select 'bad-code', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  delete from app.email_verification_codes c where c.user_id = target.id;
  -- Checked only after a valid code, as login checks it only after the password.
  if target.status = 'SUSPENDED' then
    return query select 'suspended', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  return query
    update app.users u set is_verified = true where u.id = target.id
    returning 'verified', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
end;
$$;
comment on function app.verify_email(text, text, uuid, text) is
  'Marks the account verified when presented_hash is its live code''s and the request proved the account (its session''s user, or the password hash checked); a wrong code uses up one of its attempts.';
revoke all on function app.verify_email(text, text, uuid, text) from public, anon, authenticated;
