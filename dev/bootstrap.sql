-- What a Supabase project already has and plain PostgreSQL or PGlite lacks:
-- the API roles, the `auth` helpers the policies call, and Supabase's default
-- privileges on `public`. Idempotent: it creates only what is missing, so it
-- never touches a real Supabase project's own definitions.

do $$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
end
$$;

-- The functions' connection switches to these roles per transaction, as PostgREST's authenticator does.
grant anon, authenticated, service_role to current_user;

create schema if not exists auth;
create schema if not exists extensions;
grant usage on schema auth, extensions to anon, authenticated, service_role;

do $$
begin
  -- As Supabase defines it: the legacy single claim first, then the claims object.
  if to_regprocedure('auth.uid()') is null then
    create function auth.uid() returns uuid
    language sql stable
    set search_path = ''
    as $body$
      select coalesce(
        nullif(current_setting('request.jwt.claim.sub', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
      )::uuid
    $body$;
  end if;
  if to_regprocedure('auth.role()') is null then
    create function auth.role() returns text
    language sql stable
    set search_path = ''
    as $body$
      select coalesce(
        nullif(current_setting('request.jwt.claim.role', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
      )::text
    $body$;
  end if;
  if to_regprocedure('auth.jwt()') is null then
    create function auth.jwt() returns jsonb
    language sql stable
    set search_path = ''
    as $body$
      select coalesce(
        nullif(current_setting('request.jwt.claim', true), ''),
        nullif(current_setting('request.jwt.claims', true), '')
      )::jsonb
    $body$;
  end if;
end
$$;

grant execute on function auth.uid(), auth.role(), auth.jwt() to anon, authenticated, service_role;

-- Supabase's defaults for `public`, as projects created before 2026-05-30 have them:
-- migrations must revoke what a table should not offer rather than rely on its absence.
grant usage on schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
