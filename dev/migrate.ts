/**
 * Applies `supabase/migrations/*.sql` in order, each in its own transaction,
 * and records each in `supabase_migrations.schema_migrations` exactly where
 * and how the Supabase CLI records it, so `supabase db push` later agrees
 * about what is applied. On a database without Supabase's roles it first runs
 * the local bootstrap.
 */
import postgres from "postgres";

const migrationsDir = new URL("../supabase/migrations/", import.meta.url);
const bootstrapFile = new URL("./bootstrap.sql", import.meta.url);

/** A migration failed; the message names the file and carries Postgres's error. */
export class MigrationError extends Error {
  constructor(file: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`Migration ${file} failed: ${detail}`);
    this.name = "MigrationError";
  }
}

interface MigrationFile {
  version: string;
  name: string;
  file: string;
}

/** The migration files in the order the CLI applies them: by their timestamp prefix. */
export async function listMigrations(): Promise<MigrationFile[]> {
  const files: MigrationFile[] = [];
  for await (const entry of Deno.readDir(migrationsDir)) {
    const match = /^(\d+)_(.+)\.sql$/.exec(entry.name);
    if (entry.isFile && match) files.push({ version: match[1], name: match[2], file: entry.name });
  }
  return files.sort((a, b) => a.version.localeCompare(b.version));
}

/**
 * Runs the local bootstrap on a database that lacks Supabase's roles or
 * `auth.uid()` (plain PostgreSQL, PGlite); a Supabase project is left alone.
 * `scripts/db-push.ts` shares it with the local stack, so both prepare a database alike.
 */
export async function bootstrapIfNeeded(sql: postgres.Sql, log: (line: string) => void): Promise<void> {
  if (!(await needsBootstrap(sql))) return;
  log("Creating Supabase roles and auth helpers (local bootstrap)");
  await sql.begin((tx) => tx.unsafe(Deno.readTextFileSync(bootstrapFile)));
}

async function needsBootstrap(sql: postgres.Sql): Promise<boolean> {
  const [row] = await sql<{ missing: boolean }[]>`
    select not (
      exists (select from pg_roles where rolname = 'authenticated')
      and exists (select from pg_roles where rolname = 'anon')
      and exists (select from pg_roles where rolname = 'service_role')
      and to_regprocedure('auth.uid()') is not null
    ) as missing`;
  return row.missing;
}

/** Applies the bootstrap where needed and every pending migration; returns the versions applied. */
export async function migrate(databaseUrl: string, log: (line: string) => void = console.log): Promise<string[]> {
  const sql = postgres(databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
  try {
    await bootstrapIfNeeded(sql, log);
    // The CLI's own definition of its history table.
    await sql.unsafe(`
      create schema if not exists supabase_migrations;
      create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
      alter table supabase_migrations.schema_migrations add column if not exists statements text[];
      alter table supabase_migrations.schema_migrations add column if not exists name text;`);
    const applied = new Set(
      (await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`)
        .map((row) => row.version),
    );
    const newlyApplied: string[] = [];
    for (const migration of await listMigrations()) {
      if (applied.has(migration.version)) continue;
      const text = await Deno.readTextFile(new URL(migration.file, migrationsDir));
      try {
        await sql.begin(async (tx) => {
          await tx.unsafe(text);
          await tx`
            insert into supabase_migrations.schema_migrations (version, name, statements)
            values (${migration.version}, ${migration.name}, ${[text]})`;
        });
      } catch (error) {
        throw new MigrationError(migration.file, error);
      }
      log(`Applied migration ${migration.file}`);
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
