/**
 * The contract of accounts and sessions: register, log in, verify, reset and
 * change the password, refresh, log out, list and end sessions, delete the
 * account, and the security log.
 */
import { z } from "zod";
import { integerParameter, isoTimestamp, limits, pageLimit, text, userRoles, userStatuses } from "./common.ts";

const utf8 = new TextEncoder();

/** An address as accounts take and store it: trimmed, lower-cased, a valid address of at most 254 characters. */
export const email = text("email")
  .transform((value) => value.trim().toLowerCase())
  .pipe(
    z.email({ error: "email must be a valid email address" })
      .max(limits.emailMaxChars, `email must be at most ${limits.emailMaxChars} characters`),
  )
  // JSON Schema shows a pipe's input (any string); these say what the pipe accepts.
  .meta({ format: "email", maxLength: limits.emailMaxChars, description: "trimmed and lower-cased before use" });

/** A password to set, sent as `field`: 8 characters to 72 bytes (bcrypt's limit; never truncated silently). */
function newPasswordField(field: string) {
  return text(field)
    .refine(
      (value) => [...value].length >= limits.passwordMinChars,
      `${field} must be at least ${limits.passwordMinChars} characters`,
    )
    .refine(
      // bcrypt reads at most 72 bytes; a longer password would be truncated silently.
      (value) => utf8.encode(value).length <= limits.passwordMaxBytes,
      `${field} must be at most ${limits.passwordMaxBytes} bytes`,
    )
    // Refinements do not reach JSON Schema, so the documented bounds are stated here beside them.
    .meta({
      minLength: limits.passwordMinChars,
      description: `${limits.passwordMinChars} to ${limits.passwordMaxBytes} bytes in UTF-8`,
    });
}

const password = newPasswordField("password");

/** A 6-digit code mailed to the user. */
const code = text("code").regex(/^\d{6}$/, `code must be ${limits.resetCodeDigits} digits`);

const name = text("name")
  .transform((value) => value.trim())
  .pipe(
    z.string()
      .min(1, "name must not be empty")
      .max(limits.nameMaxChars, `name must be at most ${limits.nameMaxChars} characters`),
  )
  .meta({ minLength: 1, maxLength: limits.nameMaxChars, description: "trimmed before use" });

/** Body of `POST /auth/login`. */
export const loginBody = z.object({
  email,
  password: text("password"),
  /** The `deviceToken` an earlier login on this device answered: it lets the login through the account's cap. */
  deviceToken: text("deviceToken").max(200, "deviceToken must be at most 200 characters").optional().meta({
    description: "the deviceToken an earlier login answered on this device; optional",
  }),
});
export type LoginBody = z.infer<typeof loginBody>;

/** Body of `POST /auth/register`. */
export const registerBody = z.object({ name, email, password });
export type RegisterBody = z.infer<typeof registerBody>;

/** Body of `POST /auth/anonymous/upgrade`: what a sign-up gives, for the signed-in anonymous account. */
export const upgradeAnonymousBody = z.object({ name, email, password });
export type UpgradeAnonymousBody = z.infer<typeof upgradeAnonymousBody>;

/** An 8-digit code mailed to sign in or to sign up with. */
const signInCode = text("code").regex(/^\d{8}$/, `code must be ${limits.signInCodeDigits} digits`);

/** Body of `POST /auth/anonymous/upgrade/code`: the address to mail the anonymous account's sign-up code to. */
export const requestUpgradeCodeBody = z.object({ email });
export type RequestUpgradeCodeBody = z.infer<typeof requestUpgradeCodeBody>;

/** Body of `POST /auth/anonymous/upgrade/verify`: the name, and the address with the code mailed to it. */
export const upgradeWithCodeBody = z.object({ name, email, code: signInCode });
export type UpgradeWithCodeBody = z.infer<typeof upgradeWithCodeBody>;

/** Body of `POST /auth/anonymous/merge`: the anonymous session's access token, its proof. */
export const mergeAnonymousBody = z.object({
  anonymousAccessToken: text("anonymousAccessToken").max(4096, "anonymousAccessToken must be at most 4096 characters")
    .meta({ description: 'the anonymous session\'s accessToken ("Bearer <jwt>" or the bare JWT)' }),
});
export type MergeAnonymousBody = z.infer<typeof mergeAnonymousBody>;

/** `data` of `POST /auth/anonymous/merge`: how many notes moved (0 on a retry). */
export const mergedAnonymous = z.object({ moved: z.number().int().min(0) });
export type MergedAnonymous = z.infer<typeof mergedAnonymous>;

/** Body of `POST /auth/request-password-reset`. */
export const requestPasswordResetBody = z.object({ email });
export type RequestPasswordResetBody = z.infer<typeof requestPasswordResetBody>;

/** `data` of `POST /auth/request-password-reset`: empty, so the answer reveals nothing about the email. */
export const passwordResetRequested = z.object({});
export type PasswordResetRequested = z.infer<typeof passwordResetRequested>;

/** Body of `POST /auth/create-password`. */
export const createPasswordBody = z.object({
  email,
  password,
  code,
});
export type CreatePasswordBody = z.infer<typeof createPasswordBody>;

/** Body of `POST /auth/otp`. */
export const sendSignInCodeBody = z.object({ email });
export type SendSignInCodeBody = z.infer<typeof sendSignInCodeBody>;

/** `data` of `POST /auth/otp` (empty, so the answer reveals nothing about the email), and of `/auth/anonymous/upgrade/code`. */
export const signInCodeSent = z.object({});
export type SignInCodeSent = z.infer<typeof signInCodeSent>;

/**
 * Body of `POST /auth/otp/verify`: the 8-digit code mailed by `POST /auth/otp`, and, for a code that creates the
 * account (`OTP_SIGN_UP`), its name; ignored when the address has an account.
 */
export const signInWithCodeBody = z.object({
  email,
  code: signInCode,
  name: name.optional().meta({
    description: "the new account's name when the code creates it (OTP_SIGN_UP); else the address's local part",
  }),
});
export type SignInWithCodeBody = z.infer<typeof signInWithCodeBody>;

/** The user record of login, register and create-password (`data.payload`). */
export const user = z.object({
  id: z.string(),
  name: z.string(),
  phoneNumber: z.string().nullable(),
  email: z.string(),
  role: z.enum(userRoles),
  status: z.enum(userStatuses),
  isVerified: z.boolean(),
  /**
   * An account of `POST /auth/anonymous` not yet upgraded: its `email` is `""` and its notes are capped. This
   * service always sends it; optional so the interface's record, which predates it, stays valid.
   */
  isAnonymous: z.boolean().optional().meta({ description: "true for an anonymous account; always sent" }),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type User = z.infer<typeof user>;

/** `data` of login, register, create-password and refresh. */
export const session = z.object({
  payload: user,
  /** `"Bearer <jwt>"`, as interface.md shows it. */
  accessToken: z.string().regex(/^Bearer \S+$/).meta({ description: '"Bearer " and the JWT' }),
  /** When the access token stops being accepted: 2 hours after issue. */
  expiresAt: isoTimestamp.meta({ description: "when the access token expires (2 hours after issue)" }),
  /** Opaque; trades for a new access token and a new refresh token at `POST /auth/refresh`. */
  refreshToken: z.string().min(1).meta({
    description: "opaque; send it to POST /auth/refresh for a new accessToken before or after expiresAt. " +
      "Each refresh answers a new one and retires this one.",
  }),
  /**
   * True while the account has a second factor and this session has not made the second step
   * (`POST /auth/mfa/verify`): until then it reaches no note and no account call.
   */
  mfaRequired: z.boolean().meta({
    description: "true while the account has a second factor and this session has not made the second step " +
      "(POST /auth/mfa/verify or /auth/mfa/recover): until then only those, GET /auth/user and a local sign-out " +
      "answer it, every other call 403 mfa_required",
  }),
  /** On every sign-in (not on refresh): this device's token, for the client to keep and send with its next logins. */
  deviceToken: z.string().optional().meta({
    description: "every sign-in answers one (a refresh does not): keep the newest on this device and send it as " +
      "deviceToken with later logins; it lets them through when the account is refusing logins after many " +
      "failures, up to its own cap, for 90 days, until the password changes or is reset, the account is " +
      "suspended or signed out everywhere",
  }),
});
export type Session = z.infer<typeof session>;

/**
 * Body of `POST /auth/verify-email`: the address and the code mailed to it at
 * sign-up, and the account's own proof: its session's access token as
 * `Authorization`, or its `password`. A code alone never verifies an address.
 */
export const verifyEmailBody = z.object({
  email,
  code,
  password: text("password").optional().meta({
    description: "the account's password; needed unless the request carries the account's access token",
  }),
});
export type VerifyEmailBody = z.infer<typeof verifyEmailBody>;

/** Body of `POST /auth/resend-verification`. */
export const resendVerificationBody = z.object({ email });
export type ResendVerificationBody = z.infer<typeof resendVerificationBody>;

/** `data` of `POST /auth/resend-verification`: empty, so the answer reveals nothing about the address. */
export const verificationRequested = z.object({});
export type VerificationRequested = z.infer<typeof verificationRequested>;

/** Body of `POST /auth/change-password`. */
export const changePasswordBody = z.object({
  /** Left out only by a session that signed in with a provider within the last 10 minutes. */
  currentPassword: text("currentPassword").optional(),
  newPassword: newPasswordField("newPassword"),
});
export type ChangePasswordBody = z.infer<typeof changePasswordBody>;

/** Body of `POST /auth/delete-account`: the password, re-entered, so a stolen token alone cannot erase an account. */
export const deleteAccountBody = z.object({
  /** Left out only by a session that signed in with a provider within the last 10 minutes. */
  password: text("password").optional(),
});
export type DeleteAccountBody = z.infer<typeof deleteAccountBody>;

/** `data` of `POST /auth/delete-account`: the id of the account that is gone. */
export const deletedAccount = z.object({ id: z.string() });
export type DeletedAccount = z.infer<typeof deletedAccount>;

/** Body of `POST /auth/refresh`. */
export const refreshBody = z.object({
  refreshToken: text("refreshToken").min(1, "refreshToken must not be empty").max(
    1_024,
    "refreshToken must be at most 1024 characters",
  ),
});
export type RefreshBody = z.infer<typeof refreshBody>;

/** Which sessions `POST /auth/logout` ends: the caller's, every other one of the account, or all of them. */
export const logoutScopes = ["local", "others", "global"] as const;
export type LogoutScope = (typeof logoutScopes)[number];

/** Body of `POST /auth/logout`; an empty object (or no body) ends the caller's own session. */
export const logoutBody = z.object({
  scope: z.enum(logoutScopes, { error: `scope must be one of ${logoutScopes.join(", ")}` }).optional()
    .transform((scope) => scope ?? "local")
    .meta({ description: "local when omitted" }),
});
export type LogoutBody = z.infer<typeof logoutBody>;

/** `data` of `POST /auth/logout`: how many sessions it ended. */
export const loggedOut = z.object({ scope: z.enum(logoutScopes), sessionsEnded: z.number().int() });
export type LoggedOut = z.infer<typeof loggedOut>;

/** One live session of the caller's account, as `GET /auth/sessions` lists it. */
export const sessionInfo = z.object({
  id: z.string(),
  createdAt: isoTimestamp,
  /** When the session last refreshed (or started): using an access token does not move it. */
  lastActiveAt: isoTimestamp.meta({ description: "when the session was started or last refreshed" }),
  /** When it ends unless refreshed before: the earlier of the idle and the absolute timeout. */
  expiresAt: isoTimestamp.meta({ description: "when the session ends unless refreshed (idle or absolute timeout)" }),
  userAgent: z.string().nullable(),
  /** True for the session of the token that asked. */
  current: z.boolean(),
});
export type SessionInfo = z.infer<typeof sessionInfo>;

/** `data` of `GET /auth/sessions`: the live sessions, the most recently active first. */
export const sessionList = z.object({ sessions: z.array(sessionInfo) });
export type SessionList = z.infer<typeof sessionList>;

/** Query of `DELETE /auth/sessions`. */
export const endSessionQuery = z.object({ id: text("id") });
export type EndSessionQuery = z.infer<typeof endSessionQuery>;

/** `data` of `DELETE /auth/sessions`: the ended session's id. */
export const endedSession = z.object({ id: z.string() });
export type EndedSession = z.infer<typeof endedSession>;

/** `data` of `GET /auth/user`: the caller's user record. */
export const currentUser = z.object({ payload: user });
export type CurrentUser = z.infer<typeof currentUser>;

/**
 * The `Authorization` value for an access token given with or without its
 * `Bearer ` prefix (the API issues it with the prefix, as interface.md shows).
 */
export function bearer(accessToken: string): string {
  return accessToken.startsWith("Bearer ") ? accessToken : `Bearer ${accessToken}`;
}

/** What a security event records, as `GET /auth/events` and `GET /admin-users/events` list it. */
export const securityEventTypes = [
  "registered",
  "login_succeeded",
  "login_failed",
  "login_refused_by_limit",
  "password_reset_requested",
  "password_set_with_code",
  "password_changed",
  "email_verified",
  "session_started",
  "session_ended",
  "refresh_token_reused",
  "account_suspended",
  "account_reactivated",
  "role_granted",
  "role_revoked",
  "account_deleted",
  "second_factor_added",
  "second_factor_removed",
  "second_factor_failed",
  "second_factor_locked",
  "recovery_code_used",
  "recovery_codes_replaced",
] as const;
export type SecurityEventType = (typeof securityEventTypes)[number];

/** One entry of an account's security log: never a password, code, token or hash. */
export const securityEvent = z.object({
  /** Increases with every event; pass the last one seen as `before` for the next page. */
  id: z.string().meta({ description: "increasing; the next page is before=<the last id seen>" }),
  at: isoTimestamp,
  type: z.enum(securityEventTypes),
  userId: z.string(),
  actorId: z.string().nullable().meta({
    description: "who caused it: the account itself, an admin, or null for an operator working in SQL",
  }),
  address: z.string().nullable().meta({
    description: "the client address, where one is known; in the account's own list, null for an event another " +
      "account (an admin) caused",
  }),
  userAgent: z.string().nullable().meta({ description: "as address: the client's, where one is known" }),
  details: z.record(z.string(), z.unknown()).meta({
    description: "a small object, by type: session events name sessionId (and an ended one its reason), " +
      "role events the new role",
  }),
});
export type SecurityEvent = z.infer<typeof securityEvent>;

/** `data` of `GET /auth/events` and `GET /admin-users/events`: newest first. */
export const securityEventList = z.object({ events: z.array(securityEvent) });
export type SecurityEventList = z.infer<typeof securityEventList>;

/** Query of `GET /auth/events`: a page of the caller's own events, newest first. */
export const securityEventsQuery = z.object({
  limit: pageLimit(limits.eventsLimitMax, limits.eventsLimitDefault),
  before: integerParameter("before", 1, Number.MAX_SAFE_INTEGER, undefined).meta({
    description: "only events whose id is below this one (the next page)",
  }),
});
export type SecurityEventsQuery = z.infer<typeof securityEventsQuery>;
