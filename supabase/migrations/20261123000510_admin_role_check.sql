-- ADMIN means something now: the admin endpoints open their transaction with app.require_admin(), in the
-- same round trip as their work, so the role is read from app.users on every request and a revoked admin
-- is refused on its next one, whatever role its token was issued with. Only an operator grants the role
-- (`npm run admin -- grant <email>`, or an update of app.users as the database owner): no API call can.

create function app.require_admin() returns void
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  if not app.caller_is_active() then
    raise sqlstate 'PT401' using message = 'access token revoked or account inactive';
  end if;
  if not exists (select from app.users u where u.id = (select auth.uid()) and u.role = 'ADMIN') then
    raise sqlstate 'PTADM' using message = 'the caller is not an admin';
  end if;
end;
$$;
comment on function app.require_admin() is
  'Raises PT401 unless app.caller_is_active(), and PTADM unless the caller''s account has the role ADMIN now.';
revoke all on function app.require_admin() from public, anon, authenticated;
