-- Personal notes. Ownership is enforced by Postgres itself: row-level security
-- is enabled and forced, and every policy compares the owner column with
-- auth.uid(), the caller's id from the JWT claims set for the transaction.

create table public.notes (
  id uuid primary key default gen_random_uuid(),
  -- The API's createdBy: set from the caller's token, never from a request body.
  created_by uuid not null default auth.uid() references app.users (id) on delete cascade,
  title text not null default '' check (char_length(title) <= 1000),
  content text not null default '' check (char_length(content) <= 100000),
  status text not null default 'DRAFT' check (status in ('DRAFT', 'PUBLISHED')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notes_title_or_content check (title <> '' or content <> '')
);
comment on table public.notes is 'Personal notes; each row is visible to and changeable by its owner only (RLS).';
comment on column public.notes.created_by is 'Owner: the user id (JWT sub) of the caller that created the note.';
comment on constraint notes_title_or_content on public.notes is 'A note may not have both title and content empty.';

-- Serves the listing (newest first, per owner) and its count without a sort or a heap scan.
create index notes_owner_recent_idx on public.notes (created_by, created_at desc, id desc);

create trigger notes_touch_updated_at
before update on public.notes
for each row execute function app.touch_updated_at();

alter table public.notes enable row level security;
alter table public.notes force row level security;

-- Grant exactly what the API roles need; older projects grant everything on new public tables by default.
revoke all on table public.notes from anon, authenticated, public;
grant select, insert, update, delete on table public.notes to authenticated;

create policy "owners read their notes" on public.notes
  for select to authenticated
  using (created_by = (select auth.uid()));

create policy "owners create their notes" on public.notes
  for insert to authenticated
  with check (created_by = (select auth.uid()));

create policy "owners change their notes" on public.notes
  for update to authenticated
  using (created_by = (select auth.uid()))
  with check (created_by = (select auth.uid()));

create policy "owners delete their notes" on public.notes
  for delete to authenticated
  using (created_by = (select auth.uid()));
