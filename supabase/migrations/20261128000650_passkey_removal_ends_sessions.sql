-- Removing a passkey ends the account's other sessions, as removing the authenticator app does: the owner removes a
-- lost or stolen passkey, and whoever signed in with it (at the second level) must be signed out with it. The session
-- that removed it, which gave a proof moments ago, stays. The mail says so.

create or replace function app.remove_passkey(owner uuid, target_passkey uuid, client_address text, client_user_agent text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  account app.users%rowtype;
  removed app.passkeys%rowtype;
begin
  if not app.caller_reauthenticated() then
    raise sqlstate 'PTRAU' using message = 'reauthentication required';
  end if;
  select * into account from app.users u where u.id = owner for update;
  if not exists (select from app.passkeys p where p.id = target_passkey and p.user_id = owner) then
    return 'not_found';
  end if;
  if not app.has_other_way_in(owner, target_passkey, null) then
    return 'last_sign_in_method';
  end if;
  delete from app.passkeys p where p.id = target_passkey and p.user_id = owner returning * into removed;
  update app.sessions s set revoked_at = now(), revoked_reason = 'second_factor_changed'
  where s.user_id = owner and s.id is distinct from app.claimed_session_id()
    and s.revoked_at is null and s.expires_at > now();
  perform app.record_security_event('passkey_removed', owner, owner, client_address, client_user_agent,
    jsonb_build_object('passkeyId', removed.id, 'name', removed.name));
  insert into app.mail_outbox (recipient, subject, body)
  values (account.email, 'A passkey was removed from your account',
          format('The passkey "%s" was removed from your notes account, and every other device was signed out. If '
                 || 'this was not you, reset your password now with "Forgot password": a reset signs every device out.',
                 removed.name));
  return 'removed';
end;
$$;
revoke all on function app.remove_passkey(uuid, uuid, text, text) from public, anon, authenticated;
