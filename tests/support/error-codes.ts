/**
 * The check every error answer must pass, in either envelope: a `code` from
 * the documented list, the one that goes with the answer's status.
 */
import { expect } from "vitest";
import { type ErrorCode, errorCodes, errorStatuses } from "../../supabase/functions/_shared/contract/error-codes.ts";
import type { ApiResponse } from "./api.ts";

/**
 * Asserts that the error answer `response` carries a documented `code` whose
 * status is the answer's, and that it is `expected` when one is given.
 * Answers the code.
 */
export function expectErrorCode(response: ApiResponse, expected?: ErrorCode): ErrorCode {
  const code = (response.body as { code?: unknown } | undefined)?.code;
  expect(errorCodes, `${response.status} carries a documented code: ${response.text}`).toContain(code);
  const known = code as ErrorCode;
  expect(errorStatuses[known], `the status of ${known}`).toBe(response.status);
  if (expected) expect(known, response.text).toBe(expected);
  return known;
}
