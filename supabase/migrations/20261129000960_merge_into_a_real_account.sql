-- A merge moves an anonymous account's notes into a real account only. Into another anonymous account it would add
-- them past that account's note cap (ANONYMOUS_NOTE_LIMIT): the cap is checked as notes are created, not as they
-- change owner, so merging anonymous account after anonymous account into one visitor held any number of notes.
-- Found in review. The function is 20261128000820's with that check after the anonymous account's own; 'target_anonymous' is the new
-- outcome.

create or replace function app.merge_anonymous_account(
  target uuid,
  anonymous uuid,
  anonymous_session uuid,
  anonymous_token_version integer
) returns table (outcome text, moved integer)
language plpgsql
security definer
set search_path = ''
as $$
declare
  source record;
  count integer;
begin
  -- Both owners' rows, in a fixed order, as a note write locks its owner's: a write racing the merge waits for it.
  perform 1 from app.users u where u.id in (target, anonymous) order by u.id for update;
  select u.id, u.is_anonymous, u.token_version into source from app.users u where u.id = anonymous;
  if not found then
    return query select 'gone'::text, 0;
    return;
  end if;
  if not source.is_anonymous or anonymous = target then
    return query select 'not_anonymous'::text, 0;
    return;
  end if;
  if exists (select 1 from app.users u where u.id = target and u.is_anonymous) then
    return query select 'target_anonymous'::text, 0;
    return;
  end if;
  if source.token_version <> anonymous_token_version or not exists (
    select 1 from app.sessions s
    where s.id = anonymous_session and s.user_id = anonymous and s.revoked_at is null and s.expires_at > now()
  ) then
    return query select 'revoked'::text, 0;
    return;
  end if;
  -- Each moved note takes its number from the new owner's counter, which an account without notes does not have yet.
  insert into app.note_counts (user_id) values (target) on conflict (user_id) do nothing;
  update public.notes n set created_by = target where n.created_by = anonymous;
  get diagnostics count = row_count;
  delete from app.users u where u.id = anonymous;
  return query select 'merged'::text, count;
end;
$$;
comment on function app.merge_anonymous_account(uuid, uuid, uuid, integer) is
  'Moves every note of a live anonymous session''s account to target, a real account, and deletes the anonymous account, in one transaction; gone (nothing moved) when it no longer exists, target_anonymous when target is anonymous itself.';
