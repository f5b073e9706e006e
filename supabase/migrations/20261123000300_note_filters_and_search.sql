-- Finding notes (issue 26): notes-fetch filters by status, orders by createdAt or
-- updatedAt, and searches words in title and content. Each listing is served by
-- an index that starts with the owner, and a listing's total stays O(1) where no
-- search is involved: the owner's counter now keeps how many notes are PUBLISHED
-- beside how many there are.
--
-- Search is Postgres's full-text search with the 'simple' configuration (no
-- stemming, no stop words: every language is split into words alike) over the
-- text with its diacritics removed by unaccent, so "Ecole" finds "École" and
-- "strasse" finds "Straße". Both extensions ship with hosted Supabase, with
-- PostgreSQL's contrib and with PGlite. pg_trgm was not chosen: it matches
-- fragments rather than words, and where the database's character type is C it
-- drops every non-ASCII letter from its trigrams.
--
-- The words live in app.note_words, beside the notes, not in an index on
-- public.notes: under row-level security a condition can serve as an index
-- condition only if its functions are leakproof, which the text-search match
-- operator is not (and only a superuser may declare one). A security definer
-- function finds the caller's matches in app.note_words through its index, and
-- the listing joins them to public.notes by primary key, under the policies.

create extension if not exists unaccent with schema extensions;
-- For the owner's uuid in the search's GIN index.
create extension if not exists btree_gin with schema extensions;

-- The words of a note as the search index holds them: lower-cased, without diacritics.
-- unaccent is only stable (its rules file could change), so this wrapper that names its dictionary
-- is declared immutable, as an index expression must be; a changed rules file needs a REINDEX.
create function app.note_search_vector(title text, content text) returns tsvector
language sql immutable parallel safe
set search_path = ''
as $$
  select pg_catalog.to_tsvector(
    'pg_catalog.simple',
    extensions.unaccent('extensions.unaccent'::regdictionary, title || ' ' || content)
  )
$$;
comment on function app.note_search_vector(text, text) is
  'The words of a note for search: title and content, unaccented and lower-cased, in the simple configuration.';

-- A search for `words`: every word, each matching a word of the note that starts with it, so a search
-- box finds as the user types. Null when `words` holds no word (then nothing matches).
create function app.note_search_query(words text) returns tsquery
language sql immutable parallel safe
set search_path = ''
as $$
  select pg_catalog.string_agg(
           -- A lexeme quoted for tsquery's input syntax, where backslash and quote are escaped.
           '''' || pg_catalog.replace(pg_catalog.replace(w.lexeme, '\', '\\'), '''', '''''') || ''':*',
           ' & '
         )::pg_catalog.tsquery
  from pg_catalog.unnest(pg_catalog.to_tsvector(
         'pg_catalog.simple',
         extensions.unaccent('extensions.unaccent'::regdictionary, words)
       )) as w
$$;
comment on function app.note_search_query(text) is
  'The tsquery of a search: every word of `words` (unaccented, lower-cased) as a prefix, all required.';

revoke all on function app.note_search_vector(text, text) from public, anon, authenticated;
revoke all on function app.note_search_query(text) from public, anon, authenticated;

-- The searchable words of each note, kept by triggers in the note's own transaction.
-- No foreign key to public.notes: a trigger removes a note's words with it, and bulk loads may drop and rebuild
-- the notes' indexes (a key referenced from here could not be dropped).
create table app.note_words (
  note_id uuid primary key,
  created_by uuid not null,
  words tsvector not null
);
comment on table app.note_words is
  'The words of each note for search (app.note_search_vector), kept by triggers on public.notes.';
revoke all on table app.note_words from public, anon, authenticated;
insert into app.note_words (note_id, created_by, words)
select id, created_by, app.note_search_vector(title, content) from public.notes;
-- GIN over the owner and the words in one index, so a search reads the caller's matches only.
create index note_words_owner_search_idx on app.note_words using gin (created_by, words);

create function app.index_note_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.note_words (note_id, created_by, words)
  values (new.id, new.created_by, app.note_search_vector(new.title, new.content))
  on conflict (note_id) do update set created_by = excluded.created_by, words = excluded.words;
  return null;
end;
$$;
revoke all on function app.index_note_words() from public, anon, authenticated;

create trigger notes_index_words_inserted
after insert on public.notes
for each row execute function app.index_note_words();

-- A save that changes only the status leaves the words alone.
create trigger notes_index_words_updated
after update of title, content, created_by on public.notes
for each row execute function app.index_note_words();

create function app.forget_note_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from app.note_words where note_id = old.id;
  return null;
end;
$$;
revoke all on function app.forget_note_words() from public, anon, authenticated;

create trigger notes_forget_words
after delete on public.notes
for each row execute function app.forget_note_words();

-- The JWT caller's notes that hold every word of `words` (see app.note_search_query).
-- `rows 10`: a search is meant to narrow down, and the planner then joins its matches by primary key.
create function app.caller_note_matches(words text) returns setof uuid
language sql stable
rows 10
security definer
set search_path = ''
as $$
  select w.note_id from app.note_words as w
  where w.created_by = (select auth.uid()) and w.words @@ app.note_search_query(caller_note_matches.words)
$$;
comment on function app.caller_note_matches(text) is
  'Ids of the JWT caller''s notes whose title and content hold every word of the search, through app.note_words.';
revoke all on function app.caller_note_matches(text) from public, anon;
grant execute on function app.caller_note_matches(text) to authenticated;
-- The last-edited order, and each order within one status, without a sort.
create index notes_owner_edited_idx on public.notes (created_by, updated_at desc, id desc);
create index notes_owner_status_recent_idx on public.notes (created_by, status, created_at desc, id desc);
create index notes_owner_status_edited_idx on public.notes (created_by, status, updated_at desc, id desc);

-- Per-status counts: DRAFT is notes - published.
alter table app.note_counts add column published integer not null default 0 check (published >= 0);
comment on column app.note_counts.published is 'How many of the user''s notes are PUBLISHED.';
update app.note_counts as c
set published = (select count(*) from public.notes as n where n.created_by = c.user_id and n.status = 'PUBLISHED');

create or replace function app.count_inserted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.note_counts as c (user_id, notes, published)
  select created_by, count(*), count(*) filter (where status = 'PUBLISHED') from inserted_notes group by created_by
  on conflict (user_id) do update set notes = c.notes + excluded.notes, published = c.published + excluded.published;
  return null;
end;
$$;

create or replace function app.count_deleted_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- An owner deleted together with their notes has no counter left to update, which is fine.
  update app.note_counts as c
  set notes = c.notes - gone.notes, published = c.published - gone.published
  from (
    select created_by, count(*) as notes, count(*) filter (where status = 'PUBLISHED') as published
    from deleted_notes group by created_by
  ) as gone
  where c.user_id = gone.created_by;
  return null;
end;
$$;

-- An update moves counts when a note changes owner or status. The deltas are applied by an update of
-- rows made sure to exist first: an upsert checks its proposed row (which a negative delta would fail)
-- before it finds the conflict.
create or replace function app.count_reassigned_notes() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.note_counts (user_id)
  select distinct after.created_by
  from old_notes as before join new_notes as after using (id)
  where before.created_by is distinct from after.created_by
  on conflict (user_id) do nothing;

  with moved as (
    select before.created_by as from_owner, before.status as from_status,
           after.created_by as to_owner, after.status as to_status
    from old_notes as before join new_notes as after using (id)
    where before.created_by is distinct from after.created_by or before.status is distinct from after.status
  ), deltas as (
    select owner, sum(notes) as notes, sum(published) as published from (
      select to_owner as owner, 1 as notes, (to_status = 'PUBLISHED')::int as published from moved
      union all
      select from_owner, -1, -(from_status = 'PUBLISHED')::int from moved
    ) as changes
    group by owner
  )
  update app.note_counts as c
  set notes = c.notes + d.notes, published = c.published + d.published
  from deltas as d
  where c.user_id = d.owner and (d.notes <> 0 or d.published <> 0);
  return null;
end;
$$;

-- How many of the JWT caller's notes have `status`, for a listing filtered by it.
create function app.caller_note_count(status text) returns integer
language sql stable
security definer
set search_path = ''
as $$
  select coalesce((
    select case caller_note_count.status when 'PUBLISHED' then c.published else c.notes - c.published end
    from app.note_counts as c
    where c.user_id = (select auth.uid())
  ), 0)
$$;
comment on function app.caller_note_count(text) is
  'How many of the JWT caller''s notes have the given status (DRAFT or PUBLISHED), from app.note_counts.';
revoke all on function app.caller_note_count(text) from public, anon;
grant execute on function app.caller_note_count(text) to authenticated;
