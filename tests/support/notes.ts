/**
 * Client-side helpers for the notes endpoints: each call goes over HTTP with a
 * user's token and checks the answer against the contract's own schemas, so a
 * test that uses them also proves the envelope and the Note's shape.
 */
import { expect } from "vitest";
import {
  changeList,
  type Note,
  note,
  type NoteList,
  noteList,
  notesErrorEnvelope,
  notesSuccessEnvelope,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { type ApiResponse, call, type RegisteredUser } from "./api.ts";

/** The notes success envelope around one Note (create and save). */
export const noteEnvelope = notesSuccessEnvelope(note);
/** The notes success envelope around a listing (fetch). */
export const noteListEnvelope = notesSuccessEnvelope(noteList);
/** The notes success envelope around a page of the changes feed. */
export const changeListEnvelope = notesSuccessEnvelope(changeList);

/** Asserts `status` and the notes error envelope, and returns its error message. */
export function expectNotesError(response: ApiResponse, status: number): string {
  expect(response.status, response.text).toBe(status);
  return notesErrorEnvelope.strict().parse(response.body).error;
}

/** Creates a note as `user` and returns it; fails the test unless the answer is a 201 Note. */
export async function createNote(user: RegisteredUser, body: Record<string, unknown>): Promise<Note> {
  const response = await call("/notes-create", { token: user.accessToken, body });
  expect(response.status, response.text).toBe(201);
  return noteEnvelope.parse(response.body).data;
}

/** Fetches a page of `user`'s notes with the raw `query` string (e.g. `"limit=2&offset=4"`). */
export async function fetchNotes(user: RegisteredUser, query = ""): Promise<NoteList> {
  const response = await call(`/notes-fetch${query ? `?${query}` : ""}`, { token: user.accessToken });
  expect(response.status, response.text).toBe(200);
  return noteListEnvelope.parse(response.body).data;
}

/** Every note of `user` (at most 100), newest first. */
export async function allNotes(user: RegisteredUser): Promise<Note[]> {
  return (await fetchNotes(user, "limit=100")).notes;
}
