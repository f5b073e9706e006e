-- Live updates (`GET /notes-stream`): every numbered change of a user's notes also sends a notice on the channel
-- `note_changes`, so a stream waiting on that user wakes at once instead of polling. The notice carries the owner's
-- id and the change's number, and never anything of the note: it is only a hint that the owner's feed moved, and
-- the stream reads what changed with the feed's own query under the caller's row-level security.
--
-- Postgres sends a transaction's notices when it commits and drops them when it rolls back, so a stream never
-- wakes for a change that did not happen, and the change is visible to the read the notice causes. A change's
-- number is taken under the lock of the owner's counter row, held until commit, so one owner's notices arrive in
-- the order of their numbers.
--
-- Every change takes its number here (the notes' before trigger for inserts and updates, the tombstone trigger for
-- deletions), so every change sends exactly one notice, whatever statement made it.

create or replace function app.next_note_change(owner uuid) returns bigint
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  seq bigint;
begin
  update app.note_counts set last_change = last_change + 1 where user_id = next_note_change.owner
  returning last_change into seq;
  if seq is not null then
    perform pg_notify('note_changes', next_note_change.owner::text || ' ' || seq::text);
  end if;
  return seq;
end;
$$;
comment on function app.next_note_change(uuid) is
  'Takes the next number of the owner''s change sequence, locking their counter row until the transaction ends, and sends the notice "<owner> <number>" on the channel note_changes when it commits; null when the owner has no counter (an owner being deleted).';
revoke all on function app.next_note_change(uuid) from public, anon, authenticated;
