/**
 * A 400 a form can show: the envelope's message is the first problem, as
 * before, and `fields` lists every problem found with the field or parameter
 * it concerns, in both envelopes, for bodies and query strings alike.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type FieldProblem, limits, notesErrorEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser, uniqueEmail } from "./support/api.ts";
import { expectAuthError } from "./support/auth.ts";
import { expectNotesError } from "./support/notes.ts";

let ada: RegisteredUser;

beforeAll(async () => {
  ada = await registerUser("fields");
});

/** The fields named by `problems`, in order. */
const fieldsOf = (problems: readonly FieldProblem[] | undefined) => problems?.map((problem) => problem.field);

describe("400 answers list every problem with its field", () => {
  it("register: each bad field of the body, the message being the first", async () => {
    const response = await call("/auth/register", { body: { name: "  ", email: "not an email", password: "short" } });
    const envelope = expectAuthError(response, 400);
    expect(fieldsOf(envelope.fields)).toEqual(["name", "email", "password"]);
    expect(envelope.fields).toEqual([
      { field: "name", message: "name must not be empty" },
      { field: "email", message: "email must be a valid email address" },
      { field: "password", message: `password must be at least ${limits.passwordMinChars} characters` },
    ]);
    expect(envelope.message).toBe("name must not be empty");
  });

  it("notes-create: wrong types and an unknown status, in the notes envelope", async () => {
    const response = await call("/notes-create", { token: ada.accessToken, body: { title: 5, status: "DONE" } });
    expect(expectNotesError(response, 400)).toBe("title must be a string");
    expect(response.body).toMatchObject({
      fields: [
        { field: "title", message: "title must be a string" },
        { field: "status", message: "status must be one of DRAFT, PUBLISHED" },
      ],
    });
  });

  it("notes-create: a rule about the body as a whole names no field", async () => {
    const response = await call("/notes-create", { token: ada.accessToken, body: { title: "", content: "" } });
    const message = expectNotesError(response, 400);
    expect(notesErrorEnvelope.parse(response.body).fields).toEqual([{ message }]);
  });

  it("notes-fetch: each bad query parameter", async () => {
    const response = await call("/notes-fetch?limit=0&offset=-1", { token: ada.accessToken });
    expectNotesError(response, 400);
    expect(fieldsOf(notesErrorEnvelope.parse(response.body).fields)).toEqual(["limit", "offset"]);
  });

  it("notes-fetch: a parameter given twice", async () => {
    const response = await call("/notes-fetch?limit=1&limit=2", { token: ada.accessToken });
    expectNotesError(response, 400);
    expect(response.body).toMatchObject({ fields: [{ field: "limit", message: "limit must be given once" }] });
  });

  it("malformed JSON: one problem, with no field", async () => {
    const response = await call("/auth/login", { body: "{not json" });
    expect(expectAuthError(response, 400).fields).toEqual([{ message: "Request body must be valid JSON" }]);
  });

  it("create-password: a wrong code names the code field", async () => {
    const { email } = ada;
    const response = await call("/auth/create-password", {
      body: { email, password: "a brand new secret", code: "000000" },
    });
    expect(expectAuthError(response, 400).fields).toEqual([{ field: "code", message: "Invalid or expired code" }]);
    // An unknown email is not a field problem: it is a 404 without fields.
    const unknown = await call("/auth/create-password", {
      body: { email: uniqueEmail("nobody"), password: "a brand new secret", code: "000000" },
    });
    expect(expectAuthError(unknown, 404).fields).toBeUndefined();
  });
});
