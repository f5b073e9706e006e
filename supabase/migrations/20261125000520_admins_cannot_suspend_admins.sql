-- Admins cannot suspend admins. Any admin could suspend every other, locking them out with nobody left to lift it;
-- now the statement that sets a status refuses to suspend an account whose role is ADMIN. Only the operator takes
-- the role away (`npm run admin -- revoke`); then the account can be suspended like any other.

-- The outcome of app.set_user_status: 'own-account', 'unknown-user', 'admin-account' or 'updated'. The acting admin is
-- the JWT caller, whom the statement that opened the transaction (app.require_admin) found an ADMIN now.
-- Suspending raises the account's token version, which ends every session (users_revoke_tokens, users_end_sessions).
create function app.set_user_status(target uuid, new_status text)
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
  subject app.users%rowtype;
begin
  -- An admin that suspended itself, the last one, would leave nobody to lift it.
  if target = (select auth.uid()) then
    return query select 'own-account', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  -- Locked, so an operator's grant of the role waits for this decision rather than slipping past it.
  select * into subject from app.users u where u.id = target for update;
  if not found then
    return query select 'unknown-user', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  if new_status = 'SUSPENDED' and subject.role = 'ADMIN' then
    return query select 'admin-account', null::uuid, null, null, null, null, null, null::boolean, null::timestamptz,
                        null::timestamptz, null::integer;
    return;
  end if;
  return query
    update app.users u set status = new_status where u.id = target
    returning 'updated', u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified, u.created_at,
              u.updated_at, u.token_version;
end;
$$;
comment on function app.set_user_status(uuid, text) is
  'Sets an account''s status for the acting admin (the JWT caller): never its own, and never SUSPENDED for an ADMIN.';
revoke all on function app.set_user_status(uuid, text) from public, anon, authenticated;
