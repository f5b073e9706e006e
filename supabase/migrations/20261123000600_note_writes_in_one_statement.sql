-- A versioned save or delete, and a create with an Idempotency-Key, each as one statement. They ran a
-- second statement in the same transaction to read what the first could not (the stored note after a
-- version conflict, the key's note after a repeat): a second Parse, Bind and Execute, planned anew, on
-- every request, which held keyed creates and versioned saves to about 0.8x of plain ones. In PL/pgSQL
-- that read runs only when it is needed, and each statement of a volatile function in READ COMMITTED
-- takes a new snapshot, so the read still sees what a concurrent writer committed while this one waited
-- on its lock. The functions run as the caller: row-level security applies to every row they touch.

-- Applies the changes (null keeps the stored value) to the caller's note note_id if its version, to the
-- millisecond, is expected_updated_at; written is true then. Otherwise the note as stored now, written false;
-- no row when the caller has no such note. The API shows versions to the millisecond; rows written before
-- versions existed may store microseconds.
create function app.save_note_version(
  note_id uuid,
  owner uuid,
  new_title text,
  new_content text,
  new_status text,
  expected_updated_at timestamptz
) returns table (
  id uuid, created_by uuid, title text, content text, status text, created_at timestamptz, updated_at timestamptz,
  written boolean
)
language plpgsql volatile
set search_path = ''
as $$
begin
  return query
    update public.notes n
    set title = coalesce(new_title, n.title),
        content = coalesce(new_content, n.content),
        status = coalesce(new_status, n.status)
    where n.id = note_id and n.created_by = owner and date_trunc('milliseconds', n.updated_at) = expected_updated_at
    returning n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, true;
  if not found then
    return query
      select n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, false
      from public.notes n
      where n.id = note_id and n.created_by = owner;
  end if;
end;
$$;
revoke all on function app.save_note_version(uuid, uuid, text, text, text, timestamptz) from public, anon;
grant execute on function app.save_note_version(uuid, uuid, text, text, text, timestamptz) to authenticated;

-- Deletes the caller's note note_id if its version, to the millisecond, is expected_updated_at: the
-- deleted note, written true. Otherwise the note as stored now, written false; no row when there is none.
create function app.delete_note_version(note_id uuid, owner uuid, expected_updated_at timestamptz)
returns table (
  id uuid, created_by uuid, title text, content text, status text, created_at timestamptz, updated_at timestamptz,
  written boolean
)
language plpgsql volatile
set search_path = ''
as $$
begin
  return query
    delete from public.notes n
    where n.id = note_id and n.created_by = owner and date_trunc('milliseconds', n.updated_at) = expected_updated_at
    returning n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, true;
  if not found then
    return query
      select n.id, n.created_by, n.title, n.content, n.status, n.created_at, n.updated_at, false
      from public.notes n
      where n.id = note_id and n.created_by = owner;
  end if;
end;
$$;
revoke all on function app.delete_note_version(uuid, uuid, timestamptz) from public, anon;
grant execute on function app.delete_note_version(uuid, uuid, timestamptz) to authenticated;

-- Creates the caller's note unless key `key` already made one within 24 hours (app.claim_note_create_key:
-- a concurrent repeat waits there for the first to commit). Answers what the key made: the note's id, the
-- fingerprint of the request that used the key, when (the note's createdAt and first updatedAt), and
-- whether this call made it. Empty title or content are stored as ''.
create function app.create_note_once(
  key text,
  request_hash text,
  owner uuid,
  new_title text,
  new_content text,
  new_status text
) returns table (note_id uuid, used_by_hash text, used_at timestamptz, created boolean)
language plpgsql volatile
set search_path = ''
as $$
declare
  claimed uuid := app.claim_note_create_key(key, request_hash);
begin
  if claimed is not null then
    return query
      insert into public.notes as n (id, created_by, title, content, status)
      values (claimed, owner, new_title, new_content, new_status)
      returning n.id, request_hash, n.created_at, true;
    return;
  end if;
  -- A new snapshot, taken after the claim waited for a concurrent first use of the key to commit.
  return query select k.note_id, k.request_hash, k.created_at, false from app.caller_note_create_key(key) k;
end;
$$;
revoke all on function app.create_note_once(text, text, uuid, text, text, text) from public, anon;
grant execute on function app.create_note_once(text, text, uuid, text, text, text) to authenticated;
