/**
 * `npm run admin -- grant <email>` and `npm run admin -- revoke <email>`:
 * gives an account the role ADMIN, or takes it back. Granting the role is an
 * operator's act, done with access to the database: no API call can make
 * anyone an admin. `npm run admin -- remove-mfa <email>` removes an account's
 * lost second factor and its recovery codes and ends its sessions (the user
 * is mailed, and it is on the account's security log). Runs against DATABASE_URL, or the local stack's embedded
 * PGlite (PGLITE_DATA_DIR, `.data/pglite` by default) when it is unset, unless
 * a stack holds it (then it refuses, naming the stack's pid). The
 * change is recorded in the security log (role_granted or role_revoked, with
 * no actor: an operator) by the trigger on app.users, and takes effect on the
 * account's next admin request, whatever token it holds.
 */
import { existsSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../dev/pglite-extensions.ts";
import postgres from "postgres";
import { readStackSettings } from "../dev/settings.ts";
import { DataDirInUse, lockDataDir } from "../dev/data-dir-lock.ts";

const roles = { grant: "ADMIN", revoke: "STANDARD_USER" } as const;
type Action = keyof typeof roles;

/** Runs one statement and answers its rows. */
export type RunSql = (text: string) => Promise<Record<string, unknown>[]>;

/** Thrown for what the operator must fix; the message says what. */
class AdminCommandError extends Error {}

/**
 * `text` as an SQL string literal (standard_conforming_strings, on since
 * PostgreSQL 9.1). The statement goes as one simple query, with no prepared
 * statement: it then passes any pooler, and the embedded database's socket,
 * which other connections share one statement slot of.
 */
function literal(text: string): string {
  if (text.includes("\0")) throw new AdminCommandError("The email address must not contain a NUL character");
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Sets the role of the account with `email` (trimmed and lower-cased, as
 * stored), unless it has it already; answers which of the two it was.
 */
export async function setRole(run: RunSql, email: string, role: string): Promise<"changed" | "unchanged"> {
  const [row] = await run(
    `with target as (
       select id, role from app.users where email = lower(btrim(${literal(email)})) for update
     ), changed as (
       update app.users u set role = ${literal(role)} from target
       where u.id = target.id and target.role <> ${literal(role)}
       returning u.id
     )
     select exists (select from changed) as changed from target`,
  );
  if (!row) throw new AdminCommandError(`No account has the email address ${email.trim().toLowerCase()}`);
  return row.changed ? "changed" : "unchanged";
}

/** Removes the second factor of the account with `email`; answers whether it had one. */
export async function removeSecondFactor(run: RunSql, email: string): Promise<"removed" | "none"> {
  const [row] = await run(
    `select app.remove_second_factor(id) as removed from app.users where email = lower(btrim(${literal(email)}))`,
  );
  if (!row) throw new AdminCommandError(`No account has the email address ${email.trim().toLowerCase()}`);
  return row.removed ? "removed" : "none";
}

/** The database to change: DATABASE_URL, else the embedded PGlite, refused while a stack holds it open. */
async function openDatabase(): Promise<{ run: RunSql; where: string; close(): Promise<void> }> {
  const settings = readStackSettings();
  if (settings.databaseUrl) {
    const sql = postgres(settings.databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
    return {
      run: (text) => sql.unsafe(text),
      where: "DATABASE_URL",
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const dataDir = settings.pgliteDataDir;
  if (!existsSync(`${dataDir}/PG_VERSION`)) {
    throw new AdminCommandError(
      `No embedded database in ${dataDir}: start the stack once (npm start), or set DATABASE_URL`,
    );
  }
  // A second process in the folder would corrupt it: the one lock a stack takes too (dev/data-dir-lock.ts).
  const lock = await lockDataDir(dataDir).catch((error) => {
    if (error instanceof DataDirInUse) throw new AdminCommandError(`${error.message}: stop npm start first`);
    // Its other refusals (a takeover left halfway, a folder it may not write) say what is wrong too.
    throw new AdminCommandError(error instanceof Error ? error.message : String(error));
  });
  const db = await PGlite.create({ dataDir, extensions: pgliteExtensions });
  return {
    run: async (text) => (await db.query<Record<string, unknown>>(text)).rows,
    where: `the embedded database in ${dataDir}`,
    async close() {
      await db.close();
      lock.release();
    },
  };
}

async function main(): Promise<number> {
  const [action, email, ...extra] = Deno.args;
  if (!(action === "grant" || action === "revoke" || action === "remove-mfa") || !email || extra.length > 0) {
    console.error(
      "usage: npm run admin -- grant <email>\n       npm run admin -- revoke <email>\n" +
        "       npm run admin -- remove-mfa <email>",
    );
    return 2;
  }
  try {
    const database = await openDatabase();
    try {
      const address = email.trim().toLowerCase();
      if (action === "remove-mfa") {
        const removed = await removeSecondFactor(database.run, email);
        console.log(
          removed === "removed"
            ? `${address} has no second factor now; its sessions ended (${database.where})`
            : `${address} had no second factor (${database.where})`,
        );
        return 0;
      }
      const outcome = await setRole(database.run, email, roles[action as Action]);
      const verb = action === "grant" ? "is now an admin" : "is no longer an admin";
      const already = action === "grant" ? "was already an admin" : "was not an admin";
      console.log(`${address} ${outcome === "changed" ? verb : already} (${database.where})`);
      return 0;
    } finally {
      await database.close();
    }
  } catch (error) {
    if (!(error instanceof AdminCommandError)) throw error;
    console.error(error.message);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main());
