-- The removal dispatcher's schedule on hosted Supabase: every minute, pg_cron calls the attachments-dispatch
-- function (through pg_net) with the same Vault secrets as the mail dispatch ('notes_project_url',
-- 'notes_publishable_key', 'notes_mail_dispatch_secret'), so abandoned uploads expire and queued objects are removed
-- while the store is reachable, and retried while it is not. The local stack runs the same dispatcher in a loop.
--
-- Both schedules are one job with another function's name, so they are made by one function,
-- app.schedule_function_every_minute(); app.schedule_mail_dispatch() keeps its name for the deploy steps that call it.
create function app.schedule_function_every_minute(job_name text, function_name text) returns void
language plpgsql
set search_path = ''
as $$
begin
  if function_name !~ '^[a-z][a-z0-9-]*$' then
    raise exception 'not a function name: %', function_name using errcode = '22023';
  end if;
  perform cron.schedule(
    job_name,
    '* * * * *',
    format(
      $job$
        select net.http_post(
          url := (select decrypted_secret from vault.decrypted_secrets where name = 'notes_project_url')
                 || %L,
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
      $job$,
      '/functions/v1/' || function_name
    )
  );
end;
$$;
comment on function app.schedule_function_every_minute(text, text) is
  'Schedules (or, under the same job name, reschedules) an every-minute POST to the named Edge Function, with the dispatch secret from Vault as its bearer, using pg_cron and pg_net.';
revoke all on function app.schedule_function_every_minute(text, text) from public, anon, authenticated;

create or replace function app.schedule_mail_dispatch() returns void
language sql
set search_path = ''
as $$ select app.schedule_function_every_minute('notes-mail-dispatch', 'mail-dispatch') $$;

create function app.schedule_attachment_removals() returns void
language sql
set search_path = ''
as $$ select app.schedule_function_every_minute('notes-attachments-dispatch', 'attachments-dispatch') $$;
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
