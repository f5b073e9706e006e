/**
 * The typed client of shared/ against the running stack, in Node (this test),
 * and in Deno: the README's two examples (the typed client, and the same calls
 * through supabase-js's functions.invoke), run as written.
 */
import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { createNotesClient, NotesApiError, type NotesClient } from "../shared/index.ts";
import { anonKey, readResetCode, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken } from "./support/auth.ts";
import { signToken } from "./support/tokens.ts";

const url = inject("baseUrl");
const password = "correct horse battery";

async function signedUp(label: string): Promise<{ client: NotesClient; email: string; id: string }> {
  const client = createNotesClient({ url, anonKey });
  const email = uniqueEmail(label);
  const session = await client.register({ name: `Client ${label}`, email, password });
  return { client, email, id: session.payload.id };
}

/** Runs an example file with Deno against this run's stack and answers its output. */
function runExample(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("deno", ["run", "--allow-net", "--allow-env", file], {
      env: { ...process.env, NOTES_URL: url, NOTES_ANON_KEY: anonKey },
    });
    let text = "";
    child.stdout.on("data", (chunk) => (text += chunk));
    child.stderr.on("data", (chunk) => (text += chunk));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`${file} exited ${code}:\n${text}`))));
  });
}

/** The rejection of `promise`, which must be a NotesApiError. */
async function apiError(promise: Promise<unknown>): Promise<NotesApiError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(NotesApiError);
  return error as NotesApiError;
}

describe("createNotesClient", () => {
  it("registers, keeps the token, and creates, lists, saves and deletes notes", async () => {
    const { client, id } = await signedUp("crud");
    expect(client.accessToken).toMatch(/^Bearer /);
    const note = await client.createNote({ title: "Groceries" });
    expect(note).toMatchObject({ title: "Groceries", content: "", status: "DRAFT", createdBy: id });

    const saved = await client.saveNote({ id: note.id, content: "Eggs", status: "PUBLISHED" });
    expect(saved).toMatchObject({ id: note.id, title: "Groceries", content: "Eggs", status: "PUBLISHED" });

    const page = await client.listNotes({ limit: 5 });
    expect(page.userId).toBe(id);
    expect(page.notes).toEqual([saved]);
    expect(page.pagination).toEqual({ total: 1, limit: 5, offset: 0, hasMore: false });

    expect(await client.deleteNote(note.id)).toEqual({ id: note.id });
    expect((await client.listNotes()).notes).toEqual([]);
  });

  it("iterates over every page of notes", async () => {
    const { client } = await signedUp("pages");
    for (let n = 1; n <= 23; n++) await client.createNote({ title: `note ${n}` });
    const pages = [];
    for await (const page of client.notePages({ limit: 10 })) pages.push(page);
    expect(pages.map((page) => page.notes.length)).toEqual([10, 10, 3]);
    expect(pages.map((page) => page.pagination.offset)).toEqual([0, 10, 20]);
    const titles = pages.flatMap((page) => page.notes.map((note) => note.title));
    expect(new Set(titles).size).toBe(23);
    expect(titles[0]).toBe("note 23");
  });

  it("logs in, and accepts a token with or without its Bearer prefix", async () => {
    const { email } = await signedUp("login");
    const client = createNotesClient({ url, anonKey });
    const session = await client.login({ email, password });
    expect(client.accessToken).toBe(session.accessToken);

    const bare = createNotesClient({ url, anonKey, accessToken: session.accessToken.slice("Bearer ".length) });
    expect((await bare.listNotes()).userId).toBe(session.payload.id);
    bare.signOut();
    expect(bare.accessToken).toBeUndefined();
    const signedOut = await apiError(bare.listNotes());
    expect(signedOut).toMatchObject({ status: 401, code: "token_missing" });
  });

  it("keeps when the session expires, as the API answered it", async () => {
    const before = Date.now();
    const { client } = await signedUp("expiry");
    const expiresAt = client.expiresAt?.getTime() ?? Number.NaN;
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 2 * 3600 * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2 * 3600 * 1000);
    client.signOut();
    expect(client.expiresAt).toBeUndefined();
  });

  it("forgets an expired token and calls onUnauthorized with code token_expired", async () => {
    const { client: owner } = await signedUp("expired");
    const { claims } = decodeAccessToken(owner.accessToken ?? "");
    const expired = await signToken({ ...claims, iat: Number(claims.iat) - 7300, exp: Number(claims.iat) - 100 });
    const seen: NotesApiError[] = [];
    const client = createNotesClient({ url, anonKey, accessToken: expired, onUnauthorized: (e) => seen.push(e) });
    const error = await apiError(client.createNote({ title: "too late" }));
    expect(error).toMatchObject({ status: 401, code: "token_expired", message: "Access token expired" });
    expect(seen).toEqual([error]);
    expect(client.accessToken).toBeUndefined();
    // A wrong password at login is not a lost session: no hook.
    await apiError(client.login({ email: uniqueEmail("nobody"), password }));
    expect(seen).toHaveLength(1);
  });

  it("keeps a session that a login started while a call with the old token was on its way", async () => {
    const { client: owner, email } = await signedUp("relogin");
    const { claims } = decodeAccessToken(owner.accessToken ?? "");
    const expired = await signToken({ ...claims, iat: Number(claims.iat) - 7300, exp: Number(claims.iat) - 100 });
    const seen: NotesApiError[] = [];
    let loggedInMeanwhile = false;
    const client = createNotesClient({
      url,
      anonKey,
      accessToken: expired,
      onUnauthorized: (error) => seen.push(error),
      // The app's own fetch: the 401's answer arrives only after the user has logged in again.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 401 && !loggedInMeanwhile) {
          loggedInMeanwhile = true;
          await client.login({ email, password });
        }
        return response;
      },
    });
    expect(await apiError(client.listNotes())).toMatchObject({ status: 401, code: "token_expired" });
    expect(seen).toEqual([]);
    expect(client.accessToken).toMatch(/^Bearer /);
    expect(client.accessToken).not.toContain(expired);
    expect((await client.listNotes()).notes).toEqual([]);
  });

  it("throws NotesApiError with status 0 when the service cannot be reached", async () => {
    const closed = new URL(url);
    closed.port = "9";
    const client = createNotesClient({ url: closed.href, anonKey });
    const error = await apiError(client.login({ email: uniqueEmail(), password }));
    expect(error.status).toBe(0);
    expect(error.message).toBe(`The notes service could not be reached at ${closed.origin}`);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("sets a new password with a reset code and keeps the new token", async () => {
    const { email } = await signedUp("reset");
    const client = createNotesClient({ url, anonKey });
    const message = await client.requestPasswordReset({ email });
    expect(message).toBe("If an account exists for this email, a reset code has been sent to it");
    const session = await client.createPassword({
      email,
      password: "a brand new secret",
      code: await readResetCode(email),
    });
    expect(session.payload.isVerified).toBe(true);
    expect(client.accessToken).toBe(session.accessToken);
    await client.createNote({ content: "after the reset" });
    await client.login({ email, password: "a brand new secret" });
  });

  it("throws NotesApiError with the status, the API's words and the envelope", async () => {
    const client = createNotesClient({ url, anonKey });
    const wrong = await apiError(client.login({ email: uniqueEmail("nobody"), password }));
    expect(wrong.status).toBe(401);
    expect(wrong.message).toBe("Invalid email or password");
    expect(wrong.envelope).toEqual({ statusCode: 401, message: "Invalid email or password" });
    expect(wrong.requestId).toMatch(/\S{8,}/);

    const { client: owner } = await signedUp("errors");
    const empty = await apiError(owner.createNote({}));
    expect(empty.status).toBe(400);
    expect(empty.envelope).toEqual({
      success: false,
      error: "At least one of title or content is required",
      fields: [{ message: "At least one of title or content is required" }],
    });
    const invalid = await apiError(owner.createNote({ title: "x".repeat(1001), status: "DONE" as "DRAFT" }));
    expect(invalid.fields.map((problem) => problem.field)).toEqual(["title", "status"]);

    const keyless = createNotesClient({ url, anonKey: "not-the-key" });
    expect((await apiError(keyless.requestPasswordReset({ email: uniqueEmail() }))).status).toBe(401);
  });

  it("keeps each user to their own notes", async () => {
    const first = await signedUp("first");
    const second = await signedUp("second");
    const secret = await first.client.createNote({ title: "first's secret" });
    expect((await second.client.listNotes()).notes).toEqual([]);
    expect((await apiError(second.client.saveNote({ id: secret.id, title: "taken" }))).status).toBe(404);
    expect((await apiError(second.client.deleteNote(secret.id))).status).toBe(404);
    expect((await first.client.listNotes()).notes).toEqual([secret]);
  });

  it("runs the README's quickstart in Deno as written", async () => {
    const output = await runExample("examples/quickstart.ts");
    expect(output).toMatch(/^registered ada-\w+@example\.com \(/m);
    expect(output).toMatch(/^PUBLISHED Groceries$/m);
    expect(output).toMatch(/^404 Note not found$/m);
  });
});

describe("the same calls through supabase-js functions.invoke", () => {
  it("runs the README's supabase-js example in Deno as written", async () => {
    const output = await runExample("examples/supabase-invoke.ts");
    expect(output).toMatch(/^Note created successfully$/m);
    expect(output).toMatch(/^DRAFT Groceries$/m);
    expect(output).toMatch(/^400 At least one of title or content is required$/m);
  });
});
