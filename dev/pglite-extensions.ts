/**
 * The Postgres extensions the migrations create, as PGlite must be given them
 * when it starts (PGlite loads an extension's code only when named here; the
 * migrations' `create extension` then finds it). Every embedded database of
 * the stack, the tests and the harness starts with this one set.
 *
 * @example
 * ```ts
 * const db = await PGlite.create({ dataDir, extensions: pgliteExtensions });
 * ```
 */
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";

/** pgcrypto (passwords, codes), unaccent and btree_gin (note search). */
export const pgliteExtensions = { pgcrypto, unaccent, btree_gin };
