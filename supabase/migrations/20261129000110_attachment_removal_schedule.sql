-- The removal dispatcher's schedule on hosted Supabase: every minute, pg_cron calls the attachments-dispatch
-- function (through pg_net) with the same Vault secrets as the mail dispatch ('notes_project_url',
-- 'notes_publishable_key', 'notes_mail_dispatch_secret'), so abandoned uploads expire and queued objects are removed
-- while the store is reachable, and retried while it is not. The local stack runs the same dispatcher in a loop.
create function app.schedule_attachment_removals() returns void
language plpgsql
set search_path = ''
as $$
begin
  perform cron.schedule(
    'notes-attachments-dispatch',
    '* * * * *',
    $job$
      select net.http_post(
        url := (select decrypted_secret from vault.decrypted_secrets where name = 'notes_project_url')
               || '/functions/v1/attachments-dispatch',
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
comment on function app.schedule_attachment_removals() is
  'Schedules the every-minute call of the attachments-dispatch function (with the dispatch secret from Vault) using pg_cron and pg_net; run it once those are enabled, as app.schedule_mail_dispatch().';
revoke all on function app.schedule_attachment_removals() from public, anon, authenticated;

-- Where the mail dispatch is scheduled already, so is this.
do $$
begin
  if exists (select from pg_extension where extname = 'pg_cron')
     and exists (select from pg_extension where extname = 'pg_net')
     and exists (select from pg_namespace where nspname = 'vault') then
    perform app.schedule_attachment_removals();
  end if;
end;
$$;
