/**
 * The benchmark's scenarios as request generators. The functions and the
 * floor serve the same paths, so one generator feeds both. Mutating
 * scenarios draw on supplies made before the run: notes to save cycle over a
 * fixed set, notes to delete are each used once (a reused id would be a 404,
 * which the run reports as a failure rather than hides).
 *
 * @example
 * ```ts
 * const scenarios = buildScenarios(fixtures);
 * const request = scenarios[0].next();
 * ```
 */
import type { LoadRequest } from "./load.ts";

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
}

/** What the scenarios are made from. */
export interface ScenarioFixtures {
  heavyUser: BenchUser;
  /** Users other than the heavy one, for writes and logins spread over many accounts. */
  users: BenchUser[];
  password: string;
  anonKey: string;
  notesToSave: OwnedNote[];
  notesToDelete: OwnedNote[];
}

/** One scenario: what it measures and how to make its next request. */
export interface Scenario {
  name: string;
  /** Which target ratio applies: notes (0.9x req/s, 1.2x p99) or login (0.9x req/s). */
  kind: "notes" | "login";
  next: () => LoadRequest;
}

const base = "/functions/v1";

/** Cycles through `items`, one per call. */
function cycle<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error("a scenario has nothing to work on");
  let index = 0;
  return () => items[index++ % items.length];
}

function fetchPage(user: BenchUser, limit: number, offset: number): () => LoadRequest {
  const request: LoadRequest = {
    method: "GET",
    path: `${base}/notes-fetch?limit=${limit}&offset=${offset}`,
    headers: { authorization: user.authorization },
  };
  return () => request;
}

/** Every scenario of the benchmark, in the order they run (reads before the writes that change counts). */
export function buildScenarios(fixtures: ScenarioFixtures): Scenario[] {
  const { heavyUser } = fixtures;
  const nextUser = cycle(fixtures.users);
  const nextToSave = cycle(fixtures.notesToSave);
  const nextToDelete = cycle(fixtures.notesToDelete);
  const nextLogin = cycle(fixtures.users);
  let saved = 0;
  return [
    { name: "notes-fetch limit 10", kind: "notes", next: fetchPage(heavyUser, 10, 0) },
    { name: "notes-fetch limit 100", kind: "notes", next: fetchPage(heavyUser, 100, 0) },
    { name: "notes-fetch offset 10000", kind: "notes", next: fetchPage(heavyUser, 10, 10_000) },
    {
      name: "notes-create",
      kind: "notes",
      next: () => ({
        method: "POST",
        path: `${base}/notes-create`,
        headers: { authorization: nextUser().authorization, "content-type": "application/json" },
        body: JSON.stringify({ title: "Benchmark note", content: "Written by the benchmark." }),
      }),
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
