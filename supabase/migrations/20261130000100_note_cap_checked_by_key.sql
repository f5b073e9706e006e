-- The anonymous note cap of 20261128000800, checked by two reads by key. It was one query joining the owner's row to
-- app.settings. Measured on 2026-12-06 on a database of 1,000 users and 100,000 notes, as the server's CPU time per
-- insert in a loop of single-row inserts (medians of five rounds of 3,000): 253 and 267 us with that query, 160 and
-- 173 us with no cap check at all, and 157 us with the check as written here. The query cost more than the rest of the
-- trigger. The function is otherwise the one it replaces.

create or replace function app.take_inserted_note() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  announced text;
  total integer;
begin
  update app.note_counts as c
  set last_change = c.last_change + 1,
      notes = c.notes + 1,
      published = c.published + (new.status = 'PUBLISHED')::integer
  where c.user_id = new.created_by
  returning c.last_change, c.notes into new.change_seq, total;
  if not found then
    -- A user's first note creates their counter; a concurrent first note waits for this one and counts on it.
    insert into app.note_counts as c (user_id, notes, published, last_change)
    values (new.created_by, 1, (new.status = 'PUBLISHED')::integer, 1)
    on conflict (user_id) do update
      set last_change = c.last_change + 1, notes = c.notes + 1, published = c.published + excluded.published
    returning c.last_change, c.notes into new.change_seq, total;
  end if;
  if new.change_seq is null then
    raise sqlstate 'PT401' using message = 'the note''s owner is being deleted';
  end if;
  -- The counter row stays locked until commit, so two concurrent inserts cannot both pass the cap.
  if (select u.is_anonymous from app.users u where u.id = new.created_by)
    and total > (select s.anonymous_note_limit from app.settings s) then
    raise sqlstate 'PT403' using message = 'anonymous_note_limit',
      detail = 'An anonymous account keeps a limited number of notes; sign up to write more.';
  end if;
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
  'Before each insert into public.notes: counts the note and numbers its change in one update of the owner''s counter, refuses an anonymous owner''s note past app.settings.anonymous_note_limit, indexes its words, and sends the owner''s notice once per transaction.';
revoke all on function app.take_inserted_note() from public, anon, authenticated;
