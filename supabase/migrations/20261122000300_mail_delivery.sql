-- Mail delivery by the service itself: each outbox row records its delivery
-- attempts, when the next may start, and whether it finally failed. A drainer
-- claims due mails with `for update skip locked` and pushes their next attempt
-- into the future in the same statement, so concurrent drainers never take the
-- same mail and a mail whose sending failed is retried with backoff.

alter table app.mail_outbox
  add column attempts integer not null default 0 check (attempts >= 0),
  add column next_attempt_at timestamptz not null default now(),
  add column failed_at timestamptz,
  add column last_error text;
comment on column app.mail_outbox.attempts is 'Delivery attempts started, including one under way.';
comment on column app.mail_outbox.next_attempt_at is
  'When the mail is next due: now for a new mail; after a claim, when the attempt is given up as lost and retried.';
comment on column app.mail_outbox.failed_at is
  'Set when the mail was given up after the last allowed attempt; its body is cleared then too.';
comment on column app.mail_outbox.last_error is 'What the last failed attempt ended with (a status or error name, never the body).';
comment on table app.mail_outbox is
  'Mails waiting for delivery. The functions send them through the configured provider and the local stack also prints them; sent and failed mails keep no body.';

drop index app.mail_outbox_unsent_idx;
create index mail_outbox_due_idx on app.mail_outbox (next_attempt_at, id) where sent_at is null and failed_at is null;
-- Finished mails (sent, or given up), oldest first, for the drainers' pruning.
create index mail_outbox_finished_idx on app.mail_outbox ((coalesce(sent_at, failed_at)))
  where sent_at is not null or failed_at is not null;

-- Supabase Cron calls the mail-dispatch function every minute, so a mail whose first attempt failed
-- is retried even when no new request comes in. It needs pg_cron, pg_net and Vault (hosted
-- Supabase, once the first two are enabled); the job reads the project URL and the publishable key
-- from Vault at run time (README, "Deploying": mail). Scheduling again replaces the job.
create function app.schedule_mail_dispatch() returns void
language plpgsql
set search_path = ''
as $$
begin
  perform cron.schedule(
    'notes-mail-dispatch',
    '* * * * *',
    $job$
      select net.http_post(
        url := (select decrypted_secret from vault.decrypted_secrets where name = 'notes_project_url')
               || '/functions/v1/mail-dispatch',
        headers := jsonb_build_object(
          'Content-Type', 'application/json',
          'apikey', (select decrypted_secret from vault.decrypted_secrets where name = 'notes_publishable_key')
        ),
        body := '{}'::jsonb,
        timeout_milliseconds := 10000
      )
    $job$
  );
end;
$$;
comment on function app.schedule_mail_dispatch() is
  'Schedules the every-minute call of the mail-dispatch function with pg_cron and pg_net; run it once those are enabled.';
revoke all on function app.schedule_mail_dispatch() from public, anon, authenticated;

-- Where the extensions are already there, schedule now; elsewhere (plain PostgreSQL, PGlite) do nothing.
do $$
begin
  if exists (select from pg_extension where extname = 'pg_cron')
     and exists (select from pg_extension where extname = 'pg_net')
     and exists (select from pg_namespace where nspname = 'vault') then
    perform app.schedule_mail_dispatch();
  end if;
end;
$$;
