/**
 * Ownership held by Postgres itself: connected straight to the database as a
 * client of the API roles would be (PostgREST, or anyone with a token signed
 * by the project's secret), with no application code in between. This is
 * what the policies do; what they declare (forced RLS, one policy per
 * command, the grants) is checked by pgTAP in supabase/tests/database/.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type Query, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;
const ada = randomUUID();
const bob = randomUUID();
/** Each user's live session, which a token's claims must name for the policies to let it in. */
const sessions = new Map<string, string>();
let adasNotes: string[];
let bobsNotes: string[];

/** Takes on `role` for the rest of the transaction, with `sub` as the JWT's subject when given. */
async function actAs(query: Query, role: "authenticated" | "anon", sub?: string): Promise<void> {
  await query(`set local role ${role}`);
  if (sub) {
    const claims = { sub, role, session_id: sessions.get(sub) };
    await query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify(claims)]);
  }
}

/** Back to the connecting superuser, who bypasses row-level security, to see every row as it is. */
async function allRows(query: Query) {
  await query("reset role");
  return query<{ id: string; created_by: string; title: string }>(
    "select id, created_by, title from public.notes where created_by in ($1, $2) order by title",
    [ada, bob],
  );
}

beforeAll(async () => {
  database = await openTestDatabase();
  for (const [id, label] of [[ada, "ada"], [bob, "bob"]]) {
    await database.query(
      "insert into app.users (id, name, email, password_hash) values ($1, $2, $3, 'not a usable hash')",
      [id, label, `${label}-${id.slice(0, 8)}@example.com`],
    );
    const [session] = await database.query<{ id: string }>(
      "insert into app.sessions (user_id, expires_at) values ($1, now() + interval '1 hour') returning id",
      [id],
    );
    sessions.set(id, session.id);
  }
  const insert = (owner: string, title: string) =>
    database.query<{ id: string }>(
      "insert into public.notes (created_by, title) values ($1, $2) returning id",
      [owner, title],
    );
  adasNotes = [(await insert(ada, "a1"))[0].id, (await insert(ada, "a2"))[0].id];
  bobsNotes = [(await insert(bob, "b1"))[0].id];
});

afterAll(async () => {
  await database?.query("delete from app.users where id in ($1, $2)", [ada, bob]);
  await database?.close();
});

describe("public.notes under row-level security", () => {
  it("shows B only B's rows for a select without WHERE", async () => {
    const rows = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      return query<{ id: string }>("select id from public.notes");
    });
    expect(rows.map((row) => row.id)).toEqual(bobsNotes);
  });

  it("shows A only A's rows for a select without WHERE", async () => {
    const rows = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated", ada);
      return query<{ id: string }>("select id from public.notes");
    });
    expect(rows.map((row) => row.id).sort()).toEqual([...adasNotes].sort());
  });

  it("changes only B's rows for an update without WHERE", async () => {
    const { updated, after } = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      const updated = await query<{ id: string }>("update public.notes set title = 'changed by B' returning id");
      return { updated, after: await allRows(query) };
    });
    expect(updated.map((row) => row.id)).toEqual(bobsNotes);
    expect(after.map((row) => [row.created_by, row.title])).toEqual([
      [ada, "a1"],
      [ada, "a2"],
      [bob, "changed by B"],
    ]);
  });

  it("deletes only B's rows for a delete without WHERE", async () => {
    const { deleted, after } = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      const deleted = await query<{ id: string }>("delete from public.notes returning id");
      return { deleted, after: await allRows(query) };
    });
    expect(deleted.map((row) => row.id)).toEqual(bobsNotes);
    expect(after.map((row) => row.id).sort()).toEqual([...adasNotes].sort());
  });

  it("makes B the owner of what B inserts without naming an owner", async () => {
    const [row] = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      return query<{ created_by: string }>("insert into public.notes (title) values ('mine') returning created_by");
    });
    expect(row.created_by).toBe(bob);
  });

  it("refuses B inserting a note owned by A", async () => {
    const attempt = database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      await query("insert into public.notes (created_by, title) values ($1, 'planted')", [ada]);
    });
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("refuses B setting a column the triggers keep when inserting: the attachment count, times, change number", async () => {
    for (const column of ["attachments", "created_at", "updated_at", "change_seq"]) {
      const attempt = database.rolledBack(async (query) => {
        await actAs(query, "authenticated", bob);
        await query(`insert into public.notes (title, ${column}) select 'forged', ${column} from public.notes limit 1`);
      });
      await expect(attempt, column).rejects.toMatchObject({ code: "42501" });
    }
  });

  it("refuses B handing B's note over to A", async () => {
    const attempt = database.rolledBack(async (query) => {
      await actAs(query, "authenticated", bob);
      await query("update public.notes set created_by = $1", [ada]);
    });
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("shows an authenticated session without claims no rows at all, and lets it create none", async () => {
    const rows = await database.rolledBack(async (query) => {
      await actAs(query, "authenticated");
      return query("select id from public.notes");
    });
    expect(rows).toEqual([]);
    const insert = database.rolledBack(async (query) => {
      await actAs(query, "authenticated");
      return query("insert into public.notes (title) values ('nobody''s')");
    });
    await expect(insert).rejects.toThrow();
  });

  it.each([
    "select id from public.notes",
    "insert into public.notes (title) values ('anonymous')",
    "update public.notes set title = 'x'",
    "delete from public.notes",
  ])("refuses anon outright, even with a subject in its claims: %s", async (statement) => {
    const attempt = database.rolledBack(async (query) => {
      await actAs(query, "anon", ada);
      return query(statement);
    });
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });
});

describe("REQUIRE_EMAIL_VERIFICATION, as the database holds it (app.settings)", () => {
  /** Ada (her address not verified) with the database requiring verified addresses or not; one tombstone of hers. */
  async function actAsUnverifiedAda(query: Query, required: boolean): Promise<void> {
    await query("update app.settings set require_email_verification = $1::text::boolean", [String(required)]);
    await query(
      "insert into public.note_tombstones (note_id, created_by, change_seq) values (gen_random_uuid(), $1, 1000000)",
      [ada],
    );
    await actAs(query, "authenticated", ada);
  }

  /** What Ada's token reaches: her notes and tombstones, an update and a delete of all she may touch. */
  async function reach(query: Query) {
    return {
      notes: (await query("select id from public.notes")).length,
      tombstones: (await query("select note_id from public.note_tombstones")).length,
      updated: (await query("update public.notes set title = 'changed' returning id")).length,
      counted: (await query<{ n: number }>("select app.caller_note_count() as n"))[0].n,
      deleted: (await query("delete from public.notes returning id")).length,
    };
  }

  it("gives an unverified caller's token no note to read, change or delete while it is required", async () => {
    const reached = await database.rolledBack(async (query) => {
      await actAsUnverifiedAda(query, true);
      return reach(query);
    });
    expect(reached).toEqual({ notes: 0, tombstones: 0, updated: 0, counted: 0, deleted: 0 });
  });

  it.each([
    "insert into public.notes (title) values ('unverified')",
    "select app.claim_note_create_key('a-key', 'a-hash')",
  ])("refuses an unverified caller's write while it is required: %s", async (statement) => {
    const attempt = database.rolledBack(async (query) => {
      await actAsUnverifiedAda(query, true);
      return query(statement);
    });
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("refuses an unverified caller in the statement that opens a notes request, with PT403", async () => {
    const attempt = database.rolledBack(async (query) => {
      await actAsUnverifiedAda(query, true);
      return query("select app.require_notes_caller()");
    });
    await expect(attempt).rejects.toMatchObject({ code: "PT403" });
  });

  it("lets the same caller read and write while it is not required", async () => {
    const reached = await database.rolledBack(async (query) => {
      await actAsUnverifiedAda(query, false);
      await query("insert into public.notes (title) values ('unverified but allowed')");
      await query("select app.require_notes_caller()");
      return reach(query);
    });
    expect(reached).toEqual({ notes: 3, tombstones: 1, updated: 3, counted: 3, deleted: 3 });
  });

  it("lets a verified caller read and write while it is required", async () => {
    const reached = await database.rolledBack(async (query) => {
      await query("update app.users set is_verified = true where id = $1", [ada]);
      await actAsUnverifiedAda(query, true);
      await query("insert into public.notes (title) values ('verified')");
      return reach(query);
    });
    expect(reached).toEqual({ notes: 3, tombstones: 1, updated: 3, counted: 3, deleted: 3 });
  });
});
