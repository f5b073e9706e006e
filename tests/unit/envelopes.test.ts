import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  authErrorEnvelope,
  authSuccessEnvelope,
  notesErrorEnvelope,
  notesSuccessEnvelope,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { authSuccess, errorResponse, notesSuccess } from "../../supabase/functions/_shared/http/envelopes.ts";

const data = z.object({ id: z.string() }).strict();

describe("envelopes", () => {
  it("auth success repeats the HTTP status in statusCode", async () => {
    const response = authSuccess(201, "User registered successfully", { id: "u1" });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(authSuccessEnvelope(data).strict().parse(await response.json())).toEqual({
      success: true,
      statusCode: 201,
      message: "User registered successfully",
      data: { id: "u1" },
    });
  });

  it("auth error carries statusCode, message and the code, whose status it answers", async () => {
    const response = errorResponse("auth", "email_taken", "An account with this email already exists");
    expect(response.status).toBe(409);
    expect(authErrorEnvelope.strict().parse(await response.json())).toEqual({
      statusCode: 409,
      message: "An account with this email already exists",
      code: "email_taken",
    });
  });

  it("notes success carries message, success true and data", async () => {
    const response = notesSuccess(201, "Note created successfully", { id: "n1" });
    expect(response.status).toBe(201);
    expect(notesSuccessEnvelope(data).strict().parse(await response.json())).toEqual({
      message: "Note created successfully",
      success: true,
      data: { id: "n1" },
    });
  });

  it("notes error carries error, success false and the code, whose status it answers", async () => {
    const response = errorResponse("notes", "note_not_found", "Note not found");
    expect(response.status).toBe(404);
    expect(notesErrorEnvelope.strict().parse(await response.json())).toEqual({
      error: "Note not found",
      success: false,
      code: "note_not_found",
    });
  });
});
