/**
 * Turns the seeded database into scenario fixtures: a session and an access
 * token for every seeded user, signed by the functions' own `signAccessToken`
 * with the stack's secret, and the notes that the save and delete scenarios
 * work on, with their versions.
 *
 * @example
 * ```ts
 * const fixtures = await loadFixtures(sql, {
 *   seeded, jwtSecret, anonKey, notesToSave: 10_000, notesToSaveVersioned: 120_000, notesToDelete: 150_000,
 * });
 * ```
 */
import type postgres from "postgres";
import type { User } from "../supabase/functions/_shared/contract/mod.ts";
import { bearer } from "../supabase/functions/_shared/contract/mod.ts";
import { signAccessToken } from "../supabase/functions/_shared/auth/access-tokens.ts";
import type { BenchUser, OwnedNote, ScenarioFixtures } from "./scenarios.ts";
import type { SeededData } from "./seed.ts";

interface AccountRow {
  id: string;
  email: string;
  role: User["role"];
  token_version: number;
  session_id: string;
}

/** Reads the seeded accounts and note supplies and signs the tokens. */
export async function loadFixtures(
  sql: postgres.Sql,
  input: {
    seeded: SeededData;
    jwtSecret: Uint8Array;
    anonKey: string;
    notesToSave: number;
    notesToSaveVersioned: number;
    notesToDelete: number;
  },
): Promise<ScenarioFixtures> {
  const { seeded } = input;
  const accounts = await sql<AccountRow[]>`
    with started as (
      insert into app.sessions (user_id, expires_at)
      select id, now() + interval '1 day' from app.users where email like 'bench-user-%'
      returning id, user_id
    )
    select u.id, u.email, u.role, u.token_version, started.id as session_id
    from app.users u join started on started.user_id = u.id`;
  const users = new Map<string, BenchUser>();
  for (const account of accounts) {
    const { jwt } = await signAccessToken(
      {
        user: { id: account.id, email: account.email, role: account.role },
        tokenVersion: account.token_version,
        sessionId: account.session_id,
        // A session of an account with no second factor, as every bench account is.
        level: { aal: "aal1", startedAt: new Date() },
      },
      input.jwtSecret,
    );
    users.set(account.id, { id: account.id, email: account.email, authorization: bearer(jwt) });
  }
  const userOf = (id: string): BenchUser => {
    const user = users.get(id);
    if (!user) throw new Error(`no seeded account ${id}`);
    return user;
  };
  // In physical order, which the seed interleaved over the light users, so writes spread over accounts.
  // Each version as the API writes it: UTC, to the millisecond.
  const notes = await sql<{ id: string; created_by: string; updated_at: string }[]>`
    select id, created_by,
           to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at
    from public.notes
    where created_by <> ${seeded.heavyUser.id}
    limit ${input.notesToSave + input.notesToSaveVersioned + input.notesToDelete}`;
  const owned: OwnedNote[] = notes.map((note) => ({
    id: note.id,
    owner: userOf(note.created_by),
    updatedAt: note.updated_at,
  }));
  const versionedEnd = input.notesToSave + input.notesToSaveVersioned;
  return {
    heavyUser: userOf(seeded.heavyUser.id),
    users: seeded.users.map((user) => userOf(user.id)),
    password: seeded.password,
    anonKey: input.anonKey,
    notesToSave: owned.slice(0, input.notesToSave),
    notesToSaveVersioned: owned.slice(input.notesToSave, versionedEnd),
    notesToDelete: owned.slice(versionedEnd),
  };
}
