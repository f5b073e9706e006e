/**
 * Example values for the OpenAPI document: one request and one answer per
 * operation (the errors' are in error-examples.ts). They are data, not schemas; a
 * test checks each against the schema it illustrates.
 *
 * @example
 * ```ts
 * import { successExamples } from "./examples.ts";
 * successExamples.createNote; // { message: "Note created successfully", success: true, data: {...} }
 * ```
 */
import type { OperationName } from "../../shared/operations.ts";

const userId = "7b0e3c52-5d8f-4a53-9a3e-0f3c2a9d1e44";
const noteId = "c1a2f4d6-8e0b-4c2d-9f1a-3b5c7d9e1f20";
const at = "2026-01-15T09:30:00.000Z";
const attachmentId = "4f2b7d9e-1c3a-4e5f-8a6b-9c0d2e4f6a81";
const attachment = {
  id: attachmentId,
  noteId,
  name: "receipt.png",
  type: "image/png",
  size: 48213,
  createdAt: at,
  updatedAt: "2026-01-15T09:31:00.000Z",
};

const user = {
  id: userId,
  name: "Ada Lovelace",
  phoneNumber: null,
  email: "ada@example.com",
  role: "STANDARD_USER",
  status: "ACTIVE",
  isVerified: false,
  isAnonymous: false,
  createdAt: at,
  updatedAt: at,
};
const session = {
  payload: user,
  accessToken: "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3YjBl...sig",
  expiresAt: "2026-01-15T11:30:00.000Z",
  refreshToken: "0d8f6c1e-2b7a-4e59-9c3d-5a1f7e2b8c40.0.kq3Vb9yZxT1mN4pR7sW2uE5hJ8gL0dC6fA3iO9nY1Qk",
  mfaRequired: false,
};
const sessionId = "0d8f6c1e-2b7a-4e59-9c3d-5a1f7e2b8c40";
const factorId = "9a4c2e71-6b3d-4f08-a5e1-2c7d9b0f3e68";
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const recoveryCodeList = [
  "ujzde-gxdnc-f32ep-f3dho",
  "dzdoc-is2jh-tlgmx-gedn7",
  "3u55x-tplpf-t7v4s-eh2kv",
  "j72ce-uvw75-efr6e-dt4sy",
  "wb5wk-h7dns-ipzz7-fk4zr",
  "i3r2w-yojfl-jooa7-lqsaj",
  "2xuid-5zzzz-g6zdm-en4kh",
  "vdgaj-gxben-yjqwx-6hh75",
  "66tfj-gvq6k-bnxjb-tfqxk",
  "wovom-pzom7-wbbr6-qmw4w",
];
const passkeyId = "5e2b7c90-1d4a-4f3e-8b6c-9a0d2e4f6b81";
const credentialId = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE";
const challenge = "q3Vb9yZxT1mN4pR7sW2uE5hJ8gL0dC6fA3iO9nY1QkM";
const passkey = {
  id: passkeyId,
  name: "iCloud Keychain",
  createdAt: at,
  lastUsedAt: null,
  synced: true,
  authenticator: "iCloud Keychain",
};
const passkeyExpiry = "2026-01-15T09:35:00.000Z";
/** A browser's `credential.toJSON()` after `navigator.credentials.get()` (shortened). */
const assertion = {
  id: credentialId,
  rawId: credentialId,
  type: "public-key",
  authenticatorAttachment: "platform",
  clientExtensionResults: {},
  response: {
    clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoi",
    authenticatorData: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MdAAAAAA",
    signature: "MEUCIQDbGNy3L8hGq1tK0JrbPxS5f6dQ",
    userHandle: "ew48Ul2PSlOaPg88KpMeRA",
  },
};

/** The note the examples show, as stored. */
export const note = {
  id: noteId,
  title: "Groceries",
  content: "Eggs, flour, milk",
  status: "DRAFT",
  createdBy: userId,
  createdAt: at,
  updatedAt: at,
  attachments: 0,
};

/** A request body per operation that takes one. */
export const requestExamples: Partial<Record<OperationName, unknown>> = {
  register: {
    name: "Ada Lovelace",
    email: "ada@example.com",
    password: "correct horse battery",
  },
  login: { email: "ada@example.com", password: "correct horse battery" },
  requestPasswordReset: { email: "ada@example.com" },
  createPassword: {
    email: "ada@example.com",
    password: "a new long secret",
    code: "123456",
  },
  sendSignInCode: { email: "ada@example.com" },
  signInWithCode: { email: "ada@example.com", code: "48291374" },
  refreshSession: { refreshToken: session.refreshToken },
  verifyEmail: { email: "ada@example.com", code: "482913" },
  resendVerification: { email: "ada@example.com" },
  changePassword: {
    currentPassword: "correct horse battery",
    newPassword: "a longer passphrase now",
  },
  deleteAccount: { password: "correct horse battery" },
  signOut: { scope: "global" },
  createNote: { title: "Groceries", content: "Eggs, flour, milk" },
  createAttachment: { noteId, name: "receipt.png", type: "image/png", size: 48213 },
  completeAttachment: { id: attachmentId },
  saveNote: { id: noteId, status: "PUBLISHED", expectedUpdatedAt: at },
  setUserStatus: { id: userId, status: "SUSPENDED" },
  mfaEnroll: { password: "correct horse battery" },
  mfaActivate: { factorId, code: "492039" },
  mfaVerify: { code: "731502" },
  mfaRecover: { recoveryCode: recoveryCodeList[0] },
  mfaUnenroll: { factorId, code: "215884" },
  mfaRecoveryCodes: { code: "608317" },
  reauthenticate: { password: "correct horse battery" },
  passkeysRegisterOptions: {},
  passkeysRegister: {
    name: "Laptop",
    response: {
      id: credentialId,
      rawId: credentialId,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: { credProps: { rk: true } },
      response: {
        clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoi",
        attestationObject: "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjF",
        transports: ["internal", "hybrid"],
      },
    },
  },
  passkeysLoginOptions: {},
  upgradeAnonymous: { name: "Ada Lovelace", email: "ada@example.com", password: "correct horse battery" },
  sendUpgradeCode: { email: "ada@example.com" },
  upgradeAnonymousWithCode: { name: "Ada Lovelace", email: "ada@example.com", code: "48291374" },
  mergeAnonymous: { anonymousAccessToken: session.accessToken },
  passkeysLogin: { response: assertion },
  passkeysRename: { name: "Work laptop" },
  reauthenticateWithProvider: { provider: "google", redirectTo: "https://app.example.com/settings" },
  oauthToken: {
    code: "Jm4qX7c2VbR9tLw1ZsP0eYh3kN6dGf8aUo5iQyTx",
    codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
  },
  linkIdentity: { provider: "google", redirectTo: "https://notes.example.com/settings" },
  completeLink: { code: "Qh7nW2kR9xT4vL1cZ8bM5sP0dF3gJ6yA" },
};

const adminId = "3f6d2a10-8c4b-4e7a-b1d9-5e2f0a7c6b31";
const securityEvents = [
  {
    id: "1042",
    at: "2026-01-15T10:00:00.000Z",
    type: "session_started",
    userId,
    actorId: userId,
    address: "203.0.113.7",
    userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Safari/605.1.15",
    details: { sessionId },
  },
  {
    id: "1041",
    at,
    type: "login_failed",
    userId,
    actorId: userId,
    address: "198.51.100.23",
    userAgent: "curl/8.5.0",
    details: {},
  },
];

const identityId = "5b8e1f3a-7c2d-4e9b-a6f0-3d1c8e2b9a57";
// A provider's authorization URL, as the service builds it (PKCE S256, state and nonce).
const providerUrl = "https://accounts.google.com/o/oauth2/v2/auth?client_id=1234567890-abc.apps.googleusercontent.com" +
  "&scope=openid+email+profile&response_type=code" +
  "&redirect_uri=https%3A%2F%2Fyour-project-ref.supabase.co%2Ffunctions%2Fv1%2Fauth%2Foauth%2Fcallback%2Fgoogle" +
  "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256" +
  "&state=af0ifjsldkj3Kq8vM2nR5tW7yZ1bC4dF6gH9jL0pQs&nonce=n-0S6_WzA2Mj4kP7rT9vX1zB3dF5hJ8lN0qS";

/** The success answer of each operation; for a redirect, its `Location`. */
export const successExamples: Record<OperationName, unknown> = {
  register: {
    success: true,
    statusCode: 201,
    message: "User registered successfully",
    data: session,
  },
  login: {
    success: true,
    statusCode: 200,
    message: "Login successful",
    data: session,
  },
  requestPasswordReset: {
    success: true,
    statusCode: 200,
    message: "If an account exists for this email, a reset code has been sent to it",
    data: {},
  },
  createPassword: {
    success: true,
    statusCode: 200,
    message: "Password set successfully",
    data: { ...session, payload: { ...user, isVerified: true } },
  },
  sendSignInCode: {
    success: true,
    statusCode: 200,
    message: "If an account exists for this email, a sign-in code has been sent to it",
    data: {},
  },
  signInWithCode: {
    success: true,
    statusCode: 200,
    message: "Login successful",
    data: { ...session, payload: { ...user, isVerified: true } },
  },
  refreshSession: {
    success: true,
    statusCode: 200,
    message: "Session refreshed",
    data: session,
  },
  signOut: {
    success: true,
    statusCode: 200,
    message: "Signed out",
    data: { scope: "global", sessionsEnded: 2 },
  },
  listSessions: {
    success: true,
    statusCode: 200,
    message: "Sessions fetched successfully",
    data: {
      sessions: [{
        id: sessionId,
        createdAt: at,
        lastActiveAt: "2026-01-15T10:00:00.000Z",
        expiresAt: "2026-01-22T10:00:00.000Z",
        userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Safari/605.1.15",
        current: true,
      }],
    },
  },
  revokeSession: {
    success: true,
    statusCode: 200,
    message: "Session ended",
    data: { id: sessionId },
  },
  getUser: {
    success: true,
    statusCode: 200,
    message: "User fetched successfully",
    data: { payload: user },
  },
  verifyEmail: {
    success: true,
    statusCode: 200,
    message: "Email verified",
    data: { ...session, payload: { ...user, isVerified: true } },
  },
  resendVerification: {
    success: true,
    statusCode: 200,
    message: "If this address has an account waiting for verification, a new code has been sent",
    data: {},
  },
  changePassword: {
    success: true,
    statusCode: 200,
    message: "Password changed",
    data: session,
  },
  deleteAccount: {
    success: true,
    statusCode: 200,
    message: "Account deleted",
    data: { id: userId },
  },
  listSecurityEvents: {
    success: true,
    statusCode: 200,
    message: "Events fetched successfully",
    data: { events: securityEvents },
  },
  mfaEnroll: {
    success: true,
    statusCode: 201,
    message: "Second factor enrolment started",
    data: {
      factorId,
      otpauthUrl: `otpauth://totp/Notes:ada%40example.com?secret=${totpSecret}&issuer=Notes&algorithm=SHA1&digits=6` +
        "&period=30",
      secret: totpSecret,
    },
  },
  mfaActivate: {
    success: true,
    statusCode: 200,
    message: "Second factor activated",
    data: { ...session, recoveryCodes: recoveryCodeList },
  },
  mfaVerify: {
    success: true,
    statusCode: 200,
    message: "Second factor verified",
    data: session,
  },
  mfaRecover: {
    success: true,
    statusCode: 200,
    message: "Recovery code accepted",
    data: { ...session, recoveryCodesLeft: 9 },
  },
  mfaList: {
    success: true,
    statusCode: 200,
    message: "Second factors fetched successfully",
    data: {
      factors: [{
        id: factorId,
        type: "totp",
        status: "active",
        createdAt: at,
        lastUsedAt: "2026-01-15T10:00:00.000Z",
      }],
      recoveryCodesLeft: 10,
    },
  },
  mfaUnenroll: {
    success: true,
    statusCode: 200,
    message: "Second factor removed",
    data: { factorId },
  },
  mfaRecoveryCodes: {
    success: true,
    statusCode: 200,
    message: "Recovery codes replaced",
    data: { recoveryCodes: recoveryCodeList },
  },
  reauthenticateWithProvider: {
    success: true,
    statusCode: 200,
    message: "Continue at the provider",
    data: {
      url: "https://accounts.google.com/o/oauth2/v2/auth?client_id=...&prompt=login&max_age=0&state=...",
    },
  },
  reauthenticate: {
    success: true,
    statusCode: 200,
    message: "Reauthenticated",
    data: { reauthenticatedUntil: "2026-01-15T10:05:00.000Z" },
  },
  listUsers: {
    success: true,
    statusCode: 200,
    message: "Users fetched successfully",
    data: {
      users: [{ ...user, noteCount: 12, lastActiveAt: "2026-01-15T10:00:00.000Z" }],
      pagination: { total: 1, limit: 10, offset: 0, hasMore: false },
    },
  },
  setUserStatus: {
    success: true,
    statusCode: 200,
    message: "User suspended",
    data: { payload: { ...user, status: "SUSPENDED", updatedAt: "2026-01-15T10:05:00.000Z" } },
  },
  listAccountEvents: {
    success: true,
    statusCode: 200,
    message: "Events fetched successfully",
    data: {
      events: [
        {
          ...securityEvents[0],
          id: "1043",
          at: "2026-01-15T10:05:00.000Z",
          type: "account_suspended",
          actorId: adminId,
          details: {},
        },
        ...securityEvents,
      ],
    },
  },
  createNote: {
    message: "Note created successfully",
    success: true,
    data: note,
  },
  listNotes: {
    message: "Notes fetched successfully",
    success: true,
    data: {
      notes: [note],
      pagination: { total: 1, limit: 10, offset: 0, hasMore: false },
      userId,
    },
  },
  getNote: { message: "Note fetched successfully", success: true, data: note },
  listChanges: {
    message: "Changes fetched successfully",
    success: true,
    data: {
      changes: [note, { id: "5e7a9c1b-3d2f-4a6e-8b0c-1d3f5a7c9e2b", deleted: true }],
      cursor: "YzEuN2IwZTNjNTItNWQ4Zi00YTUzLTlhM2UtMGYzYzJhOWQxZTQ0LjQy",
      hasMore: false,
    },
  },
  saveNote: {
    message: "Note saved successfully",
    success: true,
    data: {
      ...note,
      status: "PUBLISHED",
      updatedAt: "2026-01-15T10:00:00.000Z",
    },
  },
  deleteNote: {
    message: "Note deleted successfully",
    success: true,
    data: { id: noteId },
  },
  createAttachment: {
    message: "Attachment reserved: upload its bytes, then complete it",
    success: true,
    data: {
      attachment: { ...attachment, createdAt: at, updatedAt: at },
      upload: {
        url:
          `https://abcdefghijklmnop.supabase.co/storage/v1/object/upload/sign/attachments/${userId}/${attachmentId}` +
          "?token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1cmwiOiJhdHRhY2htZW50cy8...sig",
        method: "PUT",
        headers: { "Content-Type": "image/png" },
        expiresAt: "2026-01-15T11:35:00.000Z",
      },
    },
  },
  completeAttachment: { message: "Attachment ready", success: true, data: attachment },
  listAttachments: { message: "Attachments fetched successfully", success: true, data: { attachments: [attachment] } },
  getAttachment: {
    message: "Attachment fetched successfully",
    success: true,
    data: {
      attachment,
      url: `https://abcdefghijklmnop.supabase.co/storage/v1/object/sign/attachments/${userId}/${attachmentId}` +
        "?token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1cmwiOiJhdHRhY2htZW50cy8...sig",
      expiresAt: "2026-01-15T09:36:00.000Z",
    },
  },
  deleteAttachment: { message: "Attachment deleted successfully", success: true, data: { id: attachmentId } },
  oauthAuthorize: providerUrl,
  oauthCallback: "https://notes.example.com/signed-in?code=Jm4qX7c2VbR9tLw1ZsP0eYh3kN6dGf8aUo5iQyTx",
  oauthToken: { success: true, statusCode: 200, message: "Login successful", data: session },
  listIdentities: {
    success: true,
    statusCode: 200,
    message: "Identities fetched",
    data: {
      identities: [{
        id: identityId,
        provider: "google",
        email: "ada@example.com",
        createdAt: at,
        lastSignInAt: "2026-01-15T10:00:00.000Z",
      }],
      hasPassword: true,
    },
  },
  linkIdentity: {
    success: true,
    statusCode: 200,
    message: "Continue at the provider",
    data: {
      url: "https://your-project-ref.supabase.co/functions/v1/auth/identities/link/authorize" +
        "?flow=7Qm2xVb9tLw1ZsP0eYh3kN6dGf8aUo5iQyTxJm4qX7c",
    },
  },
  linkIdentityAuthorize: providerUrl,
  completeLink: {
    success: true,
    statusCode: 200,
    message: "Identity linked",
    data: { id: identityId, provider: "google", email: "ada@example.com", createdAt: at, lastSignInAt: null },
  },
  unlinkIdentity: { success: true, statusCode: 200, message: "Identity unlinked", data: { id: identityId } },
  passkeysRegisterOptions: {
    success: true,
    statusCode: 200,
    message: "Passkey registration options",
    data: {
      options: {
        challenge,
        rp: { name: "Notes", id: "notes.example.com" },
        user: { id: "ew48Ul2PSlOaPg88KpMeRA", name: "ada@example.com", displayName: "ada@example.com" },
        pubKeyCredParams: [{ alg: -8, type: "public-key" }, { alg: -7, type: "public-key" }, {
          alg: -257,
          type: "public-key",
        }],
        timeout: 300000,
        attestation: "none",
        excludeCredentials: [{ id: credentialId, type: "public-key" }],
        authenticatorSelection: { residentKey: "required", userVerification: "required", requireResidentKey: true },
        extensions: { credProps: true },
      },
      expiresAt: passkeyExpiry,
    },
  },
  passkeysRegister: { success: true, statusCode: 201, message: "Passkey registered", data: { passkey } },
  passkeysLoginOptions: {
    success: true,
    statusCode: 200,
    message: "Passkey sign-in options",
    data: {
      options: { rpId: "notes.example.com", challenge, timeout: 300000, userVerification: "required" },
      expiresAt: passkeyExpiry,
    },
  },
  passkeysLogin: {
    success: true,
    statusCode: 200,
    message: "Login successful",
    data: { ...session, deviceToken: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3YjBl...sig" },
  },
  passkeysList: { success: true, statusCode: 200, message: "Passkeys fetched", data: { passkeys: [passkey] } },
  passkeysRename: {
    success: true,
    statusCode: 200,
    message: "Passkey renamed",
    data: { passkey: { ...passkey, name: "Work laptop" } },
  },
  passkeysRemove: { success: true, statusCode: 200, message: "Passkey removed", data: { id: passkeyId } },
  // Anonymous accounts.
  signInAnonymously: {
    success: true,
    statusCode: 201,
    message: "Anonymous session started",
    data: { ...session, payload: { ...user, name: "Anonymous", email: "", isAnonymous: true } },
  },
  upgradeAnonymous: { success: true, statusCode: 200, message: "Account upgraded", data: session },
  sendUpgradeCode: { success: true, statusCode: 200, message: "A code has been sent to this email", data: {} },
  upgradeAnonymousWithCode: {
    success: true,
    statusCode: 200,
    message: "Account upgraded",
    data: { ...session, payload: { ...user, isVerified: true } },
  },
  mergeAnonymous: { success: true, statusCode: 200, message: "Notes merged", data: { moved: 3 } },
  // A stream resumed after a cursor: two missed changes, caught up, a keep-alive, then the retry before its end.
  streamChanges: [
    "event: change",
    "id: YzEuN2IwZTNjNTItNWQ4Zi00YTUzLTlhM2UtMGYzYzJhOWQxZTQ0LjQz",
    `data: ${JSON.stringify(note)}`,
    "",
    "event: change",
    "id: YzEuN2IwZTNjNTItNWQ4Zi00YTUzLTlhM2UtMGYzYzJhOWQxZTQ0LjQ0",
    'data: {"id":"5e7a9c1b-3d2f-4a6e-8b0c-1d3f5a7c9e2b","deleted":true}',
    "",
    "event: ready",
    "id: YzEuN2IwZTNjNTItNWQ4Zi00YTUzLTlhM2UtMGYzYzJhOWQxZTQ0LjQ0",
    'data: {"cursor":"YzEuN2IwZTNjNTItNWQ4Zi00YTUzLTlhM2UtMGYzYzJhOWQxZTQ0LjQ0"}',
    "",
    ": keep-alive",
    "",
    "retry: 1000",
    "",
    "",
  ].join("\n"),
};
