-- The caller's checks, planned once per connection instead of once per call.
--
-- Every notes request's opening statement and every notes policy calls these predicates, and each calls the ones
-- before it: app.caller_reaches_notes() runs app.caller_is_active() three times over. As SQL functions that are
-- security definers with their own search_path, Postgres can neither inline them nor keep their plans: it parses and
-- plans each body on each call. In PL/pgSQL the statements' plans are prepared on a connection's first call and kept
-- for its life, which the functions' pooled connections make long. With the same bodies, the database's CPU time for
-- a notes-create transaction halved (npm run bench:function-path, the Postgres column; docs/performance.md).
--
-- The bodies are the latest ones word for word (20261128000250_recovery_always_wins.sql,
-- 20261126000100_second_factor.sql, 20261129000500_anonymous_accounts_need_no_verified_address.sql); create or
-- replace keeps their owners, grants and comments.

create or replace function app.caller_is_active() returns boolean
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  return exists (
    select from app.users u
    cross join lateral (select nullif(current_setting('request.jwt.claims', true), '')::jsonb as claims) c
    join app.sessions s
      on s.id = case when jsonb_typeof(c.claims -> 'session_id') = 'string'
                          and (c.claims ->> 'session_id') ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
                     then (c.claims ->> 'session_id')::uuid end
    where u.id = (select auth.uid())
      and u.status = 'ACTIVE'
      -- A token without the claim counts as version 0, as the functions read it.
      and jsonb_typeof(coalesce(c.claims -> 'token_version', '0')) = 'number'
      and u.token_version::numeric = coalesce(c.claims ->> 'token_version', '0')::numeric
      and s.user_id = u.id
      and s.revoked_at is null
      and s.expires_at > now()
  );
end;
$$;

create or replace function app.caller_verified_as_required() returns boolean
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  return app.caller_is_active() and (
    not coalesce((select s.require_email_verification from app.settings s), false)
    or exists (select from app.users u where u.id = (select auth.uid()) and (u.is_verified or u.is_anonymous))
  );
end;
$$;

create or replace function app.caller_meets_second_factor() returns boolean
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  return not exists (
      select from app.second_factors f where f.user_id = (select auth.uid()) and f.activated_at is not null
    )
    or exists (
      select from app.sessions s
      where s.id = (select app.claimed_session_id()) and s.user_id = (select auth.uid()) and s.aal = 'aal2'
    );
end;
$$;

create or replace function app.caller_reaches_notes() returns boolean
language plpgsql stable
security definer
set search_path = ''
as $$
begin
  return app.caller_is_active() and app.caller_verified_as_required() and app.caller_meets_second_factor();
end;
$$;
