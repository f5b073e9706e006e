-- Anonymous accounts and REQUIRE_EMAIL_VERIFICATION (issue 48): an anonymous account has no address to verify, so the
-- setting must not keep it from its notes; once it signs up with an email and a password (is_anonymous cleared,
-- is_verified still false), it is held to the setting as any new account is, until the mailed code verifies it.
--
-- The one predicate every route reads (the notes and tombstone policies, the opening statements
-- app.require_notes_caller() and app.require_notes_writer(), the security definer functions of the notes requests)
-- is app.caller_verified_as_required(), so this is the only change: it reads the account's row, never a claim.

create or replace function app.caller_verified_as_required() returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select app.caller_is_active() and (
    not coalesce((select s.require_email_verification from app.settings s), false)
    or exists (select from app.users u where u.id = (select auth.uid()) and (u.is_verified or u.is_anonymous))
  )
$$;
comment on function app.caller_verified_as_required() is
  'False for a caller that is not active, and while app.settings requires verified addresses and the JWT caller''s account is neither verified nor anonymous (an anonymous account has no address to verify).';
