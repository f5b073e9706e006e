/**
 * What an operator does to the benchmark's accounts between its requests, in SQL as the database's owner: make one an
 * admin with the operator command's own statement, or mark one's address verified, as its mailed code would.
 */
import postgres from "postgres";
import { setRole } from "../scripts/admin.ts";

/** Makes `email` an admin with the operator command's own statement. */
export async function grantAdminRole(databaseUrl: string, email: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await setRole((text) => sql.unsafe(text), email, "ADMIN");
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Marks the account of `email` verified, as its owner's mailed code would: enrolling a factor needs it. */
export async function markVerified(databaseUrl: string, email: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await sql`update app.users set is_verified = true where email = ${email}`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
