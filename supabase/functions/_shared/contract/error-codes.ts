/**
 * Every `code` an error answer carries, in either envelope, with the one HTTP
 * status it always comes with. An app decides on the code, never on the
 * English of the message. Codes are stable: one is only ever added, never
 * renamed or given another meaning. `docs/errors.md` explains each one and
 * what an app should do; a unit test keeps that table and this list in step.
 *
 * @example
 * ```ts
 * errorStatuses.email_taken; // 409
 * ```
 */

/** Why a notes endpoint (or an auth endpoint acting for a signed-in user) refused the access token. */
export const tokenErrorCodes = ["token_missing", "token_invalid", "token_expired", "token_revoked"] as const;
export type TokenErrorCode = (typeof tokenErrorCodes)[number];

/** Why `POST /auth/refresh` refused the refresh token. */
export const refreshErrorCodes = [
  "refresh_token_invalid",
  "refresh_token_reused",
  "session_expired",
  "session_revoked",
] as const;
export type RefreshErrorCode = (typeof refreshErrorCodes)[number];

/** Each code and the HTTP status of every answer that carries it. */
export const errorStatuses = {
  invalid_request: 400,
  invalid_code: 400,
  invalid_cursor: 400,
  invalid_state: 400,
  cannot_change_own_status: 400,
  cannot_suspend_admin: 400,
  cannot_remove_own_factor: 400,
  cannot_remove_admin_factor: 400,
  passkey_invalid: 400,
  invalid_api_key: 401,
  invalid_credentials: 401,
  credentials_required: 401,
  token_missing: 401,
  token_invalid: 401,
  token_expired: 401,
  token_revoked: 401,
  refresh_token_invalid: 401,
  refresh_token_reused: 401,
  session_expired: 401,
  session_revoked: 401,
  invalid_dispatch_secret: 401,
  passkey_rejected: 401,
  account_suspended: 403,
  email_not_verified: 403,
  admin_required: 403,
  mfa_required: 403,
  reauthentication_required: 403,
  second_factor_locked: 403,
  sign_up_required: 403,
  endpoint_not_found: 404,
  note_not_found: 404,
  session_not_found: 404,
  factor_not_found: 404,
  identity_not_found: 404,
  user_not_found: 404,
  passkey_not_found: 404,
  attachment_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  email_taken: 409,
  note_conflict: 409,
  factor_exists: 409,
  last_sign_in_method: 409,
  identity_already_linked: 409,
  passkey_exists: 409,
  passkey_limit_reached: 409,
  not_anonymous: 409,
  attachment_limit_reached: 409,
  attachment_not_uploaded: 409,
  cursor_expired: 410,
  payload_too_large: 413,
  attachment_too_large: 413,
  attachment_quota_exceeded: 413,
  unsupported_media_type: 415,
  attachment_type_mismatch: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  // The client hung up before its body arrived: nobody reads this answer, the log counts it (nginx's 499).
  client_closed_request: 499,
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies
  & Record<TokenErrorCode | RefreshErrorCode, 401>
  & Record<string, number>;

export type ErrorCode = keyof typeof errorStatuses;

/** The codes in the order of `errorStatuses` (by status), as `z.enum` and the OpenAPI enum take them. */
export const errorCodes = Object.keys(errorStatuses) as [ErrorCode, ...ErrorCode[]];

/** The codes that come with `status`, e.g. `CodeOf<404>` for a not-found error's. */
export type CodeOf<Status extends number> = {
  [Code in ErrorCode]: (typeof errorStatuses)[Code] extends Status ? Code : never;
}[ErrorCode];
