/**
 * `npm run db:push -- <postgres-url>`: applies supabase/migrations to a
 * database with the real Supabase CLI (`supabase db push`).
 *
 * A Supabase project already has the roles and `auth.uid()` the migrations
 * rely on, so it only gets the push. A plain PostgreSQL gets the local stack's
 * bootstrap (dev/bootstrap.sql) first, the same one `npm start` applies, so
 * the CLI's history table and the local stack's agree afterwards. Then it
 * writes `REQUIRE_EMAIL_VERIFICATION` and `ANONYMOUS_NOTE_LIMIT`, each when
 * given, into `app.settings`, where the notes policies and triggers read them
 * (unset: the database keeps what it holds).
 */
import postgres from "postgres";
import {
  anonymousNoteLimitFrom,
  attachmentLimitsFrom,
  requireEmailVerificationFrom,
  writeDatabaseSettings,
} from "../dev/database-settings.ts";
import { setUpAttachmentsBucket } from "../dev/attachments-bucket.ts";
import { bootstrapIfNeeded } from "../dev/migrate.ts";

const repoRoot = new URL("../", import.meta.url);
// The CLI pinned in package.json, not whatever `supabase` is on PATH.
const supabaseCli = new URL("node_modules/.bin/supabase", repoRoot);

const [databaseUrl, ...extra] = Deno.args;
if (
  !databaseUrl || extra.length > 0 || !/^postgres(ql)?:\/\//.test(databaseUrl)
) {
  console.error(
    "usage: npm run db:push -- postgresql://user:password@host:port/database",
  );
  Deno.exit(2);
}

// Read before anything is pushed, so a mistyped value changes nothing.
const given = (() => {
  try {
    return {
      requireEmailVerification: requireEmailVerificationFrom(Deno.env),
      anonymousNoteLimit: anonymousNoteLimitFrom(Deno.env),
      ...attachmentLimitsFrom(Deno.env),
    };
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    Deno.exit(2);
  }
})();

const sql = postgres(databaseUrl, {
  prepare: false,
  max: 1,
  onnotice: () => {},
});
try {
  await bootstrapIfNeeded(sql, console.log);
} finally {
  await sql.end({ timeout: 5 });
}

// --yes: the push runs unattended (CI), and the CLI asks before applying.
const push = new Deno.Command(supabaseCli, {
  args: ["db", "push", `--remote=${databaseUrl}`, "--yes"],
  cwd: repoRoot,
  stdin: "null",
});
const { code } = await push.spawn().status;
if (code !== 0) Deno.exit(code);

const stored = await writeDatabaseSettings(databaseUrl, given);
console.log(`The database requires verified addresses for notes: ${stored.requireEmailVerification}`);
console.log(`An anonymous account may own ${stored.anonymousNoteLimit} notes`);
console.log(`Attachments: at most ${stored.attachmentMaxBytes} bytes each, ${stored.attachmentQuotaBytes} per account`);
// Where the project's Storage is named, its private bucket is made (or brought up to date) with the same limits.
const bucket = await setUpAttachmentsBucket().catch((error) => {
  console.error(`The attachments bucket was not set up: ${error instanceof Error ? error.message : error}`);
  Deno.exit(1);
});
if (bucket !== undefined) console.log(`The attachments bucket ${bucket ? "was created" : "is up to date"}`);
