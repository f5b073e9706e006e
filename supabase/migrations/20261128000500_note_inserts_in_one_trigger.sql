-- Writes that cost what they must, second step (issue 45). An insert into public.notes ran two trigger functions:
-- a row trigger before it that counted and numbered the note, and a statement trigger after it that read the
-- statement's inserted rows back from a transition table to index their words and send the notices. The statement
-- trigger was the larger part of what the triggers cost: Postgres had to keep every inserted row for it, queue it,
-- and call a second security definer function.
--
-- Now one row trigger before the insert does all of it, from the row it is about to insert:
--
-- - one update of the owner's counter row counts the note and numbers its change (as before: a single HOT version
--   of the row), the owner's first note creating the row;
-- - the note's words go into app.note_words;
-- - the owner's notice is sent, once per owner and transaction: "<owner> <number>" with this note's number when
--   it is the transaction's first change of the owner's notes (an update or deletion that came first has sent the
--   notice with its statement's latest number). A notice only wakes a stream, which then reads every change
--   after its position, all of the transaction's (numbers are taken under the owner's counter lock until commit,
--   so no other transaction's change lies between). The owners announced so far stay in the transaction-local
--   setting app.announced_note_owners, which the update and delete statement triggers read and extend too.
--
-- An insert that Postgres does not make after the trigger has run (a check or policy that fails, a unique
-- violation) fails its statement, which takes the count, the number, the words and the notice back with it. An
-- INSERT ... ON CONFLICT on public.notes whose row conflicts with a note's id fails too, instead of leaving a
-- counted note that does not exist: the trigger has already inserted the proposed id's words, and that note's
-- words are there.
--
-- What stays as it was: the totals per status are exact in the writing transaction, the change numbers gapless per
-- owner, every note's words searchable from its own transaction on, and the payload carries only the owner's id and
-- a number. Updates and deletions keep their triggers.

create function app.take_inserted_note() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  announced text;
begin
  update app.note_counts as c
  set last_change = c.last_change + 1,
      notes = c.notes + 1,
      published = c.published + (new.status = 'PUBLISHED')::integer
  where c.user_id = new.created_by
  returning c.last_change into new.change_seq;
  if not found then
    -- A user's first note creates their counter; a concurrent first note waits for this one and counts on it.
    insert into app.note_counts as c (user_id, notes, published, last_change)
    values (new.created_by, 1, (new.status = 'PUBLISHED')::integer, 1)
    on conflict (user_id) do update
      set last_change = c.last_change + 1, notes = c.notes + 1, published = c.published + excluded.published
    returning c.last_change into new.change_seq;
  end if;
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  -- A new note's id is new, so its words cannot be there yet (see the top of this file for when they are). The
  -- words are app.note_search_vector(title, content), written out: a SQL function with a SET clause is never
  -- inlined, and calling it cost as much as the rest of this trigger (a test keeps the two equal).
  insert into app.note_words (note_id, created_by, words)
  values (
    new.id,
    new.created_by,
    pg_catalog.to_tsvector(
      'pg_catalog.simple',
      extensions.unaccent('extensions.unaccent'::regdictionary, new.title || ' ' || new.content)
    )
  );
  announced := coalesce(current_setting('app.announced_note_owners', true), '');
  if strpos(announced, new.created_by::text) = 0 then
    perform pg_notify('note_changes', new.created_by::text || ' ' || new.change_seq::text);
    perform set_config('app.announced_note_owners', announced || new.created_by::text || ' ', true);
  end if;
  return new;
end;
$$;
comment on function app.take_inserted_note() is
  'Before each insert into public.notes: counts the note and numbers its change in one update of the owner''s counter, indexes its words, and sends the owner''s notice once per transaction.';
revoke all on function app.take_inserted_note() from public, anon, authenticated;

drop trigger notes_index_and_announce_inserted on public.notes;
drop function app.index_and_announce_inserted_notes();

drop trigger notes_number_change on public.notes;
create trigger notes_take_inserted
before insert on public.notes
for each row execute function app.take_inserted_note();

-- Updates only now: inserts take their number above.
create or replace function app.number_note_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  new.change_seq := app.next_note_change(new.created_by);
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  return new;
end;
$$;
create trigger notes_number_change
before update on public.notes
for each row execute function app.number_note_change();
