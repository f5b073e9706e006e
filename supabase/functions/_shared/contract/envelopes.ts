/**
 * The two envelope pairs of interface.md ("Response envelopes") and what
 * every error carries in them: its code and, on a 400, every field's problem.
 */
import { z } from "zod";
import { errorCodes } from "./error-codes.ts";
import { note, noteConflictCode } from "./notes.ts";

/** Which envelope pair an endpoint speaks (interface.md, "Response envelopes"). */
export type EnvelopeKind = "auth" | "notes";

/** One problem found in a 400's input, with the field or parameter it concerns. */
export const fieldProblem = z.object({
  field: z.string().optional().meta({ description: "absent when the problem is the input as a whole" }),
  message: z.string(),
});
export type FieldProblem = z.infer<typeof fieldProblem>;

/**
 * What every error envelope carries beside the interface's own fields: the
 * machine-readable reason, and on a 400 every problem found.
 */
const errorDetails = {
  code: z.enum(errorCodes).meta({
    description: "machine-readable reason, stable across releases: decide on it, never on the message. " +
      "Each code always comes with the same HTTP status; docs/errors.md says what each means and what to do.",
  }),
  fields: z.array(fieldProblem).optional().meta({ description: "on a 400: every problem found" }),
};

/** Auth success envelope around `data`. */
export function authSuccessEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), statusCode: z.number().int(), message: z.string(), data });
}
export const authErrorEnvelope = z.object({ statusCode: z.number().int(), message: z.string(), ...errorDetails });
export type AuthErrorEnvelope = z.infer<typeof authErrorEnvelope>;

/** Notes success envelope around `data`. */
export function notesSuccessEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ message: z.string(), success: z.literal(true), data });
}
export const notesErrorEnvelope = z.object({
  error: z.string(),
  success: z.literal(false),
  ...errorDetails,
  note: note.optional().meta({
    description: `on a 409 with code ${noteConflictCode}: the note as it is stored now, to show beside the client's`,
  }),
});
export type NotesErrorEnvelope = z.infer<typeof notesErrorEnvelope>;

/** What an error may carry beside its envelope's own fields and its code; `note` only ever in the notes envelope. */
export type ErrorDetails = Pick<NotesErrorEnvelope, "fields" | "note">;
