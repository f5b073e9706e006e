/**
 * The benchmark's scenarios as request generators. The functions and the
 * floor serve the same paths, so one generator feeds both. Mutating
 * scenarios draw on supplies made before the run: notes to save cycle over a
 * fixed set, notes to delete are each used once (a reused id would be a 404,
 * which the run reports as a failure rather than hides), and so are the
 * notes of versioned saves, each named with the version the fixtures read
 * (a version used twice would be a 409, equally reported). Every create with
 * an `Idempotency-Key` sends a key never sent before.
 *
 * @example
 * ```ts
 * const scenarios = buildScenarios(fixtures);
 * const request = scenarios[0].next();
 * ```
 */
import type { LoadRequest } from "./load.ts";
import { searchWord } from "./seed.ts";

/** A user as the scenarios use it: its token for notes, its email for login. */
export interface BenchUser {
  id: string;
  email: string;
  /** The `Authorization` header value. */
  authorization: string;
}

/** A note and the user that may change it. */
export interface OwnedNote {
  id: string;
  owner: BenchUser;
  /** Its `updatedAt` as the API writes it, read before the run. */
  updatedAt: string;
}

/** What the scenarios are made from. */
export interface ScenarioFixtures {
  heavyUser: BenchUser;
  /** Users other than the heavy one, for writes and logins spread over many accounts. */
  users: BenchUser[];
  password: string;
  anonKey: string;
  notesToSave: OwnedNote[];
  /** Saved once each, naming the version they had before the run. */
  notesToSaveVersioned: OwnedNote[];
  notesToDelete: OwnedNote[];
}

/** One scenario: what it measures and how to make its next request. */
export interface Scenario {
  name: string;
  /** Which target ratio applies: notes (0.9x req/s, 1.2x p99) or login (0.9x req/s). */
  kind: "notes" | "login";
  /**
   * The scenario this one is a variant of (the same request plus one feature): the benchmark also runs the
   * two against each other on the functions, so the feature's cost is a ratio measured in one run.
   */
  variantOf?: string;
  next: () => LoadRequest;
}

const base = "/functions/v1";

/**
 * The floor's login with the hash checked by a Postgres backend, as login worked before hashing moved into the
 * functions; the bench compares the function's login with it.
 */
export const loginHashInPostgresPath = `${base}/auth/login-hash-in-postgres`;

/** Cycles through `items`, one per call. */
function cycle<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error("a scenario has nothing to work on");
  let index = 0;
  return () => items[index++ % items.length];
}

function fetchPage(user: BenchUser, limit: number, offset: number, filters = ""): () => LoadRequest {
  const request: LoadRequest = {
    method: "GET",
    path: `${base}/notes-fetch?limit=${limit}&offset=${offset}${filters}`,
    headers: { authorization: user.authorization },
  };
  return () => request;
}

/** Every scenario of the benchmark, in the order they run (reads before the writes that change counts). */
export function buildScenarios(fixtures: ScenarioFixtures): Scenario[] {
  const { heavyUser } = fixtures;
  const nextUser = cycle(fixtures.users);
  const nextToSave = cycle(fixtures.notesToSave);
  const nextToSaveVersioned = cycle(fixtures.notesToSaveVersioned);
  const nextToDelete = cycle(fixtures.notesToDelete);
  const nextToGet = cycle(fixtures.notesToSave);
  const nextLogin = cycle(fixtures.users);
  let saved = 0;
  // Unique across the whole run, floor and functions alike, so no create is a repeat.
  let keys = 0;
  const create = (headers: Record<string, string> = {}): LoadRequest => ({
    method: "POST",
    path: `${base}/notes-create`,
    headers: { authorization: nextUser().authorization, "content-type": "application/json", ...headers },
    body: JSON.stringify({ title: "Benchmark note", content: "Written by the benchmark." }),
  });
  return [
    { name: "notes-fetch limit 10", kind: "notes", next: fetchPage(heavyUser, 10, 0) },
    { name: "notes-fetch limit 100", kind: "notes", next: fetchPage(heavyUser, 100, 0) },
    { name: "notes-fetch offset 10000", kind: "notes", next: fetchPage(heavyUser, 10, 10_000) },
    { name: "notes-fetch status=PUBLISHED", kind: "notes", next: fetchPage(heavyUser, 10, 0, "&status=PUBLISHED") },
    { name: "notes-fetch q (10 match)", kind: "notes", next: fetchPage(heavyUser, 10, 0, `&q=${searchWord}`) },
    {
      name: "notes-get",
      kind: "notes",
      next: () => {
        const note = nextToGet();
        return {
          method: "GET",
          path: `${base}/notes-get?id=${note.id}`,
          headers: { authorization: note.owner.authorization },
        };
      },
    },
    { name: "notes-create", kind: "notes", next: () => create() },
    {
      name: "notes-create with Idempotency-Key",
      kind: "notes",
      variantOf: "notes-create",
      next: () => create({ "idempotency-key": `bench-create-${++keys}` }),
    },
    {
      name: "notes-save",
      kind: "notes",
      next: () => {
        const note = nextToSave();
        return {
          method: "POST",
          path: `${base}/notes-save`,
          headers: { authorization: note.owner.authorization, "content-type": "application/json" },
          body: JSON.stringify({ id: note.id, title: `Saved ${++saved}`, status: "PUBLISHED" }),
        };
      },
    },
    {
      name: "notes-save with expectedUpdatedAt",
      kind: "notes",
      variantOf: "notes-save",
      next: () => {
        const note = nextToSaveVersioned();
        return {
          method: "POST",
          path: `${base}/notes-save`,
          headers: { authorization: note.owner.authorization, "content-type": "application/json" },
          body: JSON.stringify({
            id: note.id,
            title: `Saved ${++saved}`,
            status: "PUBLISHED",
            expectedUpdatedAt: note.updatedAt,
          }),
        };
      },
    },
    {
      name: "notes-delete",
      kind: "notes",
      next: () => {
        const note = nextToDelete();
        return {
          method: "DELETE",
          path: `${base}/notes-delete?id=${note.id}`,
          headers: { authorization: note.owner.authorization },
        };
      },
    },
    {
      name: "auth/login",
      kind: "login",
      next: () => ({
        method: "POST",
        path: `${base}/auth/login`,
        headers: { apikey: fixtures.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email: nextLogin().email, password: fixtures.password }),
      }),
    },
  ];
}
