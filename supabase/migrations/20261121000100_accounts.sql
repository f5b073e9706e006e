-- Accounts, credentials, password-reset codes and the mail outbox.
-- They live in schema `app`, which PostgREST does not expose: only the
-- functions' own database role reads or writes them.

create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;

create schema app;
comment on schema app is 'Accounts and credentials of the notes service; never exposed through the Data API.';
revoke all on schema app from public;
-- Hosted projects may grant new schemas to the API roles; say explicitly that they get nothing here.
revoke all on schema app from anon, authenticated;

create table app.users (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 200),
  -- Stored trimmed and lower-cased, so the unique index compares emails case-insensitively.
  email text not null check (email = lower(btrim(email)) and char_length(email) between 3 and 254),
  phone_number text,
  password_hash text not null,
  role text not null default 'STANDARD_USER' check (role in ('STANDARD_USER', 'ADMIN')),
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED')),
  is_verified boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table app.users is 'One row per account. password_hash is a bcrypt hash from pgcrypto; the password itself is never stored.';
comment on column app.users.email is 'Trimmed and lower-cased; unique.';
create unique index users_email_key on app.users (email);

create table app.password_reset_codes (
  user_id uuid primary key references app.users (id) on delete cascade,
  code_hash text not null,
  expires_at timestamptz not null,
  attempts_left integer not null check (attempts_left >= 0),
  created_at timestamptz not null default now()
);
comment on table app.password_reset_codes is 'At most one live reset code per user, stored as a bcrypt hash; a new request replaces it, a correct use deletes it.';

create table app.mail_outbox (
  id bigint generated always as identity primary key,
  recipient text not null,
  subject text not null,
  -- Cleared once the mail is delivered, so codes do not outlive their delivery.
  body text,
  created_at timestamptz not null default now(),
  sent_at timestamptz
);
comment on table app.mail_outbox is 'Mails waiting for a sender. The local stack prints and marks them; a deployment drains them with its mail provider.';
create index mail_outbox_unsent_idx on app.mail_outbox (id) where sent_at is null;

revoke all on all tables in schema app from public, anon, authenticated;

-- Keeps updated_at true whatever statement changes a row.
create function app.touch_updated_at() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
revoke all on function app.touch_updated_at() from public;

create trigger users_touch_updated_at
before update on app.users
for each row execute function app.touch_updated_at();
