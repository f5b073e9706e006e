/**
 * Seeds the benchmark's data set with set-based SQL (`generate_series`), not
 * HTTP, so a million notes take seconds: 1,000 users sharing one bcrypt hash
 * (hashing each at cost 10 would take over a minute), one heavy user with
 * 20,000 notes and the remaining notes spread evenly over the others.
 *
 * @example
 * ```ts
 * const seeded = await seedNotes(sql, { password: "bench-password", bcryptCost: 10 });
 * ```
 */
import type postgres from "postgres";

/** The shape of a data set: how many users and notes, and how many of the notes are the heavy user's. */
export interface SeedPlan {
  users: number;
  notes: number;
  heavyUserNotes: number;
}

/** The word that 10 of the heavy user's notes hold, and no other seeded note: what the search scenarios look for. */
export const searchWord = "zephyr";

/** The benchmark's data set. */
export const seedPlan: SeedPlan = {
  users: 1_000,
  notes: 1_000_000,
  heavyUserNotes: 20_000,
};

/** A seeded account, enough to sign its token and log in as it. */
export interface SeededUser {
  id: string;
  email: string;
}

/** What the scenarios need to know about the seeded data. */
export interface SeededData {
  heavyUser: SeededUser;
  /** Every user but the heavy one, in a stable order. */
  users: SeededUser[];
  /** The password every seeded user logs in with. */
  password: string;
  seconds: number;
}

/**
 * Fills an empty, migrated database. Needs a role that bypasses row-level
 * security (the table owner is subject to the forced policies otherwise).
 */
export async function seedNotes(
  sql: postgres.Sql,
  input: { password: string; bcryptCost: number; plan?: SeedPlan; statistics?: boolean },
): Promise<SeededData> {
  // Without statistics the notes are loaded as an import through the API leaves them: indexes maintained row by row
  // (an index built afterwards would record the table's size), never vacuumed nor analyzed, and autovacuum kept off
  // until `analyzeNotes`, so the planner sees what it sees before autoanalyze (and always on PGlite).
  const statistics = input.statistics ?? true;
  const started = performance.now();
  const { users, notes, heavyUserNotes } = input.plan ?? seedPlan;
  const lightUsers = users - 1;
  const lightNotes = notes - heavyUserNotes;
  await sql.begin(async (tx) => {
    // Bulk-load as Postgres's "Populating a Database" advises: no per-row foreign-key checks, and
    // the indexes built once after the load (about 3x faster than maintaining them row by row).
    await tx`set local session_replication_role = replica`;
    await tx`set local maintenance_work_mem = '256MB'`;
    if (!statistics) {
      for (const table of ["public.notes", "app.note_words", "app.note_counts"]) {
        await tx.unsafe(`alter table ${table} set (autovacuum_enabled = false)`);
      }
    }
    const restore = statistics ? await dropIndexes(tx, "public.notes") : [];
    // Each user's id derives from its number, so runs are comparable and user 1 is the heavy one.
    await tx`
      insert into app.users (id, name, email, password_hash, is_verified)
      select md5('bench-user-' || n)::uuid, 'Bench User ' || n, 'bench-user-' || n || '@example.com',
             hash.value, true
      from generate_series(1, ${users}::int) as n,
           (select extensions.crypt(${input.password}, extensions.gen_salt('bf', ${input.bcryptCost})) as value)
             as hash`;
    // One note per second of history, so pages ordered by created_at are stable; the oldest change first.
    // Every 2,000th holds the search word, so a search on the heavy user matches 10 of 20,000 notes.
    await tx`
      insert into public.notes (created_by, title, content, status, created_at, updated_at, change_seq)
      select md5('bench-user-1')::uuid, 'Heavy note ' || g,
             'Seeded content of heavy note ' || g || case when g % 2000 = 0 then ' ' || ${searchWord}::text else '' end,
             case when g % 3 = 0 then 'PUBLISHED' else 'DRAFT' end,
             now() - make_interval(secs => g), now() - make_interval(secs => g), ${heavyUserNotes}::int + 1 - g
      from generate_series(1, ${heavyUserNotes}::int) as g`;
    await tx`
      with light as (
        select array_agg(md5('bench-user-' || n)::uuid order by n) as ids
        from generate_series(2, ${users}::int) as n)
      insert into public.notes (created_by, title, content, status, created_at, updated_at, change_seq)
      select light.ids[1 + g % ${lightUsers}::int], 'Note ' || g, 'Seeded content of note ' || g,
             case when g % 3 = 0 then 'PUBLISHED' else 'DRAFT' end,
             now() - make_interval(secs => g), now() - make_interval(secs => g), ${lightNotes}::int + 1 - g
      from light, generate_series(1, ${lightNotes}::int) as g`;
    for (const statement of restore) await tx.unsafe(statement);
    // The words index of search, which the replica role's silenced triggers did not fill, built after its rows.
    const restoreWords = statistics ? await dropIndexes(tx, "app.note_words") : [];
    await tx`
      insert into app.note_words (note_id, created_by, words)
      select id, created_by, app.note_search_vector(title, content) from public.notes`;
    for (const statement of restoreWords) await tx.unsafe(statement);
    // The replica role also kept the counting and numbering triggers from firing, so the counters and each
    // user's change sequence are set from the rows (numbered above, oldest first, unique per user).
    await tx`
      insert into app.note_counts (user_id, notes, published, last_change)
      select created_by, count(*), count(*) filter (where status = 'PUBLISHED'), max(change_seq)
      from public.notes group by created_by
      on conflict (user_id) do update
        set notes = excluded.notes, published = excluded.published, last_change = excluded.last_change`;
  });
  if (statistics) await analyzeNotes(sql);
  const rows = await sql<{ id: string; email: string }[]>`
    select id, email from app.users where email like 'bench-user-%' order by email`;
  const heavyUser = rows.find((row) => row.email === "bench-user-1@example.com");
  if (!heavyUser) throw new Error("the heavy user was not seeded");
  return {
    heavyUser,
    users: rows.filter((row) => row !== heavyUser),
    password: input.password,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * Fresh statistics for the planner, and a visibility map so counts can be
 * index-only; autovacuum back on where an unanalyzed seed turned it off.
 */
export async function analyzeNotes(sql: postgres.Sql): Promise<void> {
  for (const table of ["public.notes", "app.users", "app.note_words", "app.note_counts"]) {
    await sql.unsafe(`alter table ${table} reset (autovacuum_enabled)`);
    await sql.unsafe(`vacuum (analyze) ${table}`);
  }
}

/**
 * Drops the table's indexes (those backing constraints through their
 * constraint), and first the other tables' foreign keys that need them, and
 * returns the statements that recreate them exactly as the migrations defined
 * them, read back from the catalog: the indexes first, then those keys.
 */
async function dropIndexes(tx: postgres.TransactionSql, table: string): Promise<string[]> {
  const referencing = await tx<{ drop: string; create: string }[]>`
    select format('alter table %s drop constraint %I', f.conrelid::regclass, f.conname) as drop,
           format('alter table %s add constraint %I %s', f.conrelid::regclass, f.conname,
                  pg_get_constraintdef(f.oid)) as create
    from pg_constraint f
    where f.confrelid = ${table}::regclass and f.contype = 'f'`;
  const indexes = await tx<{ drop: string; create: string }[]>`
    select format('alter table %s drop constraint %I', c.conrelid::regclass, c.conname) as drop,
           format('alter table %s add constraint %I %s', c.conrelid::regclass, c.conname,
                  pg_get_constraintdef(c.oid)) as create
    from pg_constraint c
    where c.conrelid = ${table}::regclass and c.contype in ('p', 'u', 'x')
    union all
    select format('drop index %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid)
    from pg_index i
    where i.indrelid = ${table}::regclass
      and not exists (select from pg_constraint c where c.conrelid = i.indrelid and c.conindid = i.indexrelid)`;
  for (const statement of [...referencing, ...indexes]) await tx.unsafe(statement.drop);
  return [...indexes, ...referencing].map((statement) => statement.create);
}
