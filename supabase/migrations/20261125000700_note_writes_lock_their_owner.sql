-- A note write and the deletion of its account took their locks in opposite orders. A write locked the owner's
-- change counter (app.note_counts, in the notes' before trigger) and then the owner's row (the foreign key's check,
-- after it); the account's delete locked the owner's row and then, cascading, its notes and counter. Run at once,
-- the two deadlocked (40P01); or the write passed its caller check just before the delete committed and found no
-- counter, and the note had no change number (a not-null violation). Either was a 500.
--
-- A transaction that writes notes now takes the owner's row first, in the weakest lock a delete of it waits for
-- (FOR KEY SHARE: saves, logins and refreshes of the account, which update the row, do not wait for it), and only
-- then checks the caller. A delete that came first makes the write wait, then find the account gone: a 401, as for
-- any token of a deleted account. A write that came first makes the delete wait until it is done.

create function app.require_notes_writer() returns void
language plpgsql volatile
security definer
set search_path = ''
as $$
begin
  perform from app.users where id = (select auth.uid()) for key share;
  perform app.require_notes_caller();
end;
$$;
comment on function app.require_notes_writer() is
  'Locks the caller''s account row FOR KEY SHARE, then checks the caller as app.require_notes_caller(); opens every transaction that writes notes, so it and a deletion of the account take their locks in one order.';
revoke all on function app.require_notes_writer() from public, anon;
grant execute on function app.require_notes_writer() to authenticated;

-- A note written outside the functions (an operator in SQL) while its owner is being deleted: a refusal that says
-- so, instead of a not-null violation.
create or replace function app.number_note_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- A user's first note creates their counter; the statement's count trigger then counts the note.
  if tg_op = 'INSERT' then
    insert into app.note_counts (user_id) values (new.created_by) on conflict (user_id) do nothing;
  end if;
  new.change_seq := app.next_note_change(new.created_by);
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  return new;
end;
$$;
