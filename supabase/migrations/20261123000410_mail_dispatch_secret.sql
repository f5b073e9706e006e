-- mail-dispatch no longer accepts the public key alone: the every-minute job also sends the dispatch
-- secret (MAIL_DISPATCH_SECRET, or the service-role key) as a bearer token, read from Vault at run
-- time as 'notes_mail_dispatch_secret' (docs/deploying.md, Mail). Scheduling again replaces the job.
create or replace function app.schedule_mail_dispatch() returns void
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
          'apikey', (select decrypted_secret from vault.decrypted_secrets where name = 'notes_publishable_key'),
          'Authorization', 'Bearer ' || (
            select decrypted_secret from vault.decrypted_secrets where name = 'notes_mail_dispatch_secret'
          )
        ),
        body := '{}'::jsonb,
        timeout_milliseconds := 10000
      )
    $job$
  );
end;
$$;
comment on function app.schedule_mail_dispatch() is
  'Schedules the every-minute call of the mail-dispatch function (with the dispatch secret from Vault) using pg_cron and pg_net; run it once those are enabled.';
revoke all on function app.schedule_mail_dispatch() from public, anon, authenticated;

-- A job scheduled by the earlier definition sends no secret: replace it where it exists.
do $$
begin
  if exists (select from pg_extension where extname = 'pg_cron')
     and exists (select from pg_extension where extname = 'pg_net')
     and exists (select from pg_namespace where nspname = 'vault') then
    perform app.schedule_mail_dispatch();
  end if;
end;
$$;
