-- Merging an anonymous account into an existing one (issue 48): the app signed the visitor up with an address that
-- has an account, the owner signed into it, and the anonymous session's notes move there. One transaction: every
-- note of the anonymous account changes owner, and the anonymous account is deleted.
--
-- Moving a note is an update of created_by, which the note triggers already count exactly (count_reassigned_notes:
-- one less for the old owner, one more for the new), number in the new owner's sequence (so the new owner's feed
-- and streams see each note as new, and its notice wakes them) and re-index for search under the new owner. The
-- anonymous account's sessions, counter and feed go with its row; its streams end as for any deleted account.
--
-- Retrying changes nothing: the anonymous account is gone, so there is nothing to move ('gone', 0).

create function app.merge_anonymous_account(
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
  'Moves every note of a live anonymous session''s account to target and deletes the anonymous account, in one transaction; gone (nothing moved) when it no longer exists.';
revoke all on function app.merge_anonymous_account(uuid, uuid, uuid, integer) from public, anon, authenticated;
