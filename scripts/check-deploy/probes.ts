/**
 * The requests `npm run check:deploy` makes of the functions it boots from the staged upload: one per function, in
 * an order where each can rely on the ones before, and how an event stream's answer is read.
 */

/** One request a booted function must answer, and what it stores for the requests after it. */
export interface Probe {
  name: string;
  path: string;
  method: string;
  body?: Record<string, unknown>;
  /** Send the signed-up user's token beside the apikey. */
  authorized?: boolean;
  /** Also send the mail-dispatch secret as a bearer token. */
  dispatchSecret?: boolean;
  /** An event stream, which never ends by itself: read until this event comes, then closed. */
  untilEvent?: string;
  /** A browser navigation (a provider sign-in's start and return): sent as a browser would, without an apikey. */
  browserNavigation?: true;
  status: number;
  /** The error `code` the answer must carry. */
  code?: string;
  /** A session for another account (an anonymous one): the probes after it go on as the signed-up user. */
  anotherAccount?: true;
}

/** An attachment id no attachment has. */
const noAttachment = "00000000-0000-4000-8000-000000000000";

/** How long a probe's event stream may take to send the event it waits for. */
export const streamProbeMs = 30_000;

/**
 * Reads the event stream of `response` until an event named `event` comes,
 * then closes it; answers what was read, or why it never came.
 */
export async function readUntilEvent(response: Response, event: string): Promise<{ reached: boolean; text: string }> {
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = "";
  if (!reader) return { reached: false, text: "no body" };
  try {
    while (!new RegExp(`^event: ${event}$`, "m").test(text)) {
      const { done, value } = await reader.read();
      if (done) return { reached: false, text };
      text += decoder.decode(value, { stream: true });
    }
    return { reached: true, text };
  } catch (error) {
    return { reached: false, text: `${text}${error}` };
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** A browser's answer to a ceremony nobody started, well-formed: what a function must parse before refusing it. */
function madeUpCredential(type: "webauthn.create" | "webauthn.get"): Record<string, unknown> {
  const base64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const clientDataJSON = base64url(
    JSON.stringify({ type, challenge: "bm90LWlzc3VlZC1oZXJl", origin: "https://app.example" }),
  );
  const id = "bm90LWEtcmVhbC1jcmVkZW50aWFs";
  const response = type === "webauthn.create"
    ? { clientDataJSON, attestationObject: "oA" }
    : { clientDataJSON, authenticatorData: "AAAA", signature: "AAAA" };
  return { id, rawId: id, type: "public-key", clientExtensionResults: {}, response };
}

/**
 * A request per function, in an order where each can rely on the ones before:
 * sign up, sign in, reset, then the notes round trip on one note. Each one
 * reaches the database, so the driver and the SQL run in the staged copy.
 */
export function probes(
  email: string,
  password: string,
  noteId: () => string,
  refreshToken: () => string,
): Probe[] {
  return [
    {
      name: "auth-register",
      path: "/auth-register",
      method: "POST",
      body: { name: "Deploy", email, password },
      status: 201,
    },
    {
      name: "auth",
      path: "/auth/login",
      method: "POST",
      body: { email, password },
      status: 200,
    },
    {
      name: "auth-login",
      path: "/auth-login",
      method: "POST",
      body: { email, password },
      status: 200,
    },
    {
      name: "auth-refresh",
      path: "/auth-refresh",
      method: "POST",
      get body() {
        return { refreshToken: refreshToken() };
      },
      status: 200,
    },
    {
      name: "auth-user",
      path: "/auth-user",
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "auth-sessions",
      path: "/auth-sessions",
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "auth-events",
      path: "/auth-events?limit=5",
      method: "GET",
      authorized: true,
      status: 200,
    },
    { name: "auth-mfa", path: "/auth-mfa", method: "GET", authorized: true, status: 200 },
    // The deploy's account has not verified its address: the statement that enrolls refuses it in Postgres.
    {
      name: "auth-mfa-enroll",
      path: "/auth-mfa-enroll",
      method: "POST",
      body: { password },
      authorized: true,
      status: 403,
    },
    {
      name: "auth-reauthenticate",
      path: "/auth-reauthenticate",
      method: "POST",
      body: { password },
      authorized: true,
      status: 200,
    },
    // Just after the proof above: the statement that stores the challenge checks it.
    {
      name: "auth-passkeys-register-options",
      path: "/auth-passkeys-register-options",
      method: "POST",
      body: {},
      authorized: true,
      status: 200,
    },
    // No authenticator here: a made-up credential boots the verification and is refused before any statement.
    {
      name: "auth-passkeys-register",
      path: "/auth-passkeys-register",
      method: "POST",
      body: { response: madeUpCredential("webauthn.create") },
      authorized: true,
      status: 400,
      code: "passkey_invalid",
    },
    {
      name: "auth-passkeys-login-options",
      path: "/auth-passkeys-login-options",
      method: "POST",
      body: {},
      status: 200,
    },
    // A challenge never issued: the statement that spends it finds none.
    {
      name: "auth-passkeys-login",
      path: "/auth-passkeys-login",
      method: "POST",
      body: { response: madeUpCredential("webauthn.get") },
      status: 401,
      code: "passkey_rejected",
    },
    { name: "auth-passkeys", path: "/auth-passkeys", method: "GET", authorized: true, status: 200 },
    // Anonymous accounts: one started; the probe's own account is a real one, which the upgrade's statement refuses.
    { name: "auth-anonymous", path: "/auth-anonymous", method: "POST", status: 201, anotherAccount: true },
    {
      name: "auth-anonymous-upgrade",
      path: "/auth-anonymous-upgrade",
      method: "POST",
      body: { name: "Deploy", email: `again-${email}`, password },
      authorized: true,
      status: 409,
      code: "not_anonymous",
    },
    // The probe's own account is a real one: each statement of an upgrade by code refuses it.
    {
      name: "auth-anonymous-upgrade-code",
      path: "/auth-anonymous-upgrade-code",
      method: "POST",
      body: { email: `code-${email}` },
      authorized: true,
      status: 409,
      code: "not_anonymous",
    },
    {
      name: "auth-anonymous-upgrade-verify",
      path: "/auth-anonymous-upgrade-verify",
      method: "POST",
      body: { name: "Deploy", email: `code-${email}`, code: "12345678" },
      authorized: true,
      status: 409,
      code: "not_anonymous",
    },
    // A token that is no JWT at all: refused before any statement would run it.
    {
      name: "auth-anonymous-merge",
      path: "/auth-anonymous-merge",
      method: "POST",
      body: { anonymousAccessToken: "not.a.token" },
      authorized: true,
      status: 401,
      code: "token_invalid",
    },
    // Not the pending factor's id: the statement that reads it finds none.
    {
      name: "auth-mfa-activate",
      path: "/auth-mfa-activate",
      method: "POST",
      body: { factorId: "00000000-0000-4000-8000-000000000000", code: "000000" },
      authorized: true,
      status: 404,
    },
    // The account has no active factor, so its token names none: these answer 404 before any statement.
    ...[
      { name: "auth-mfa-verify", body: { code: "000000" } },
      { name: "auth-mfa-recover", body: { recoveryCode: "aaaaa-bbbbb-ccccc-ddddd" } },
      { name: "auth-mfa-unenroll", body: { factorId: "00000000-0000-4000-8000-000000000000", code: "000000" } },
      { name: "auth-mfa-recovery-codes", body: { code: "000000" } },
    ].map(({ name, body }) => ({ name, path: `/${name}`, method: "POST", body, authorized: true, status: 404 })),
    // The deploy's user is no admin: the role check in Postgres answers 403.
    {
      name: "admin-users",
      path: "/admin-users/events?id=00000000-0000-4000-8000-000000000000",
      method: "GET",
      authorized: true,
      status: 403,
    },
    {
      name: "auth-resend-verification",
      path: "/auth-resend-verification",
      method: "POST",
      body: { email },
      status: 200,
    },
    {
      name: "auth-verify-email",
      path: "/auth-verify-email",
      method: "POST",
      // With the account's token, a wrong code: the one statement that verifies runs, and says no.
      body: { email, code: "000000" },
      authorized: true,
      status: 400,
    },
    {
      name: "auth-change-password",
      path: "/auth-change-password",
      method: "POST",
      body: { currentPassword: password, newPassword: password },
      authorized: true,
      status: 200,
    },
    {
      name: "auth-request-password-reset",
      path: "/auth-request-password-reset",
      method: "POST",
      body: { email },
      status: 200,
    },
    {
      name: "auth-create-password",
      path: "/auth-create-password",
      method: "POST",
      body: { email, password, code: "000000" },
      status: 400,
    },
    {
      name: "auth-otp",
      path: "/auth-otp",
      method: "POST",
      body: { email },
      status: 200,
    },
    {
      name: "auth-otp-verify",
      path: "/auth-otp-verify",
      method: "POST",
      // A wrong code: the one statement that checks it runs, and says no.
      body: { email, code: "00000000" },
      status: 400,
    },
    {
      name: "notes-create",
      path: "/notes-create",
      method: "POST",
      body: { title: "Deployed" },
      authorized: true,
      status: 201,
    },
    { name: "notes-fetch", path: "/notes-fetch?limit=5&q=deployed", method: "GET", authorized: true, status: 200 },
    { name: "notes-changes", path: "/notes-changes?limit=5", method: "GET", authorized: true, status: 200 },
    // From the feed's end: it reads where that is, and says it is live.
    {
      name: "notes-stream",
      path: "/notes-stream",
      method: "GET",
      authorized: true,
      untilEvent: "ready",
      status: 200,
    },
    {
      name: "notes-get",
      get path() {
        return `/notes-get?id=${noteId()}`;
      },
      method: "GET",
      authorized: true,
      status: 200,
    },
    // Attachments, with a Storage that does not answer (SUPABASE_URL is a closed port): what needs only the database
    // answers, and what needs the store is a 503 after the database has had its say (a reservation made and let go).
    {
      name: "attachments-create",
      path: "/attachments-create",
      method: "POST",
      get body() {
        return { noteId: noteId(), name: "deployed.png", type: "image/png", size: 100 };
      },
      authorized: true,
      status: 503,
      code: "service_unavailable",
    },
    {
      name: "attachments-list",
      get path() {
        return `/attachments-list?noteId=${noteId()}`;
      },
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "attachments-get",
      path: `/attachments-get?id=${noAttachment}`,
      method: "GET",
      authorized: true,
      status: 404,
      code: "attachment_not_found",
    },
    {
      name: "attachments-complete",
      path: "/attachments-complete",
      method: "POST",
      body: { id: noAttachment },
      authorized: true,
      status: 503,
      code: "service_unavailable",
    },
    {
      name: "attachments-delete",
      path: `/attachments-delete?id=${noAttachment}`,
      method: "DELETE",
      authorized: true,
      status: 404,
      code: "attachment_not_found",
    },
    // The released reservation's object is queued: the removal is tried, fails, and stays queued.
    { name: "attachments-dispatch", path: "/attachments-dispatch", method: "POST", dispatchSecret: true, status: 200 },
    {
      name: "notes-save",
      path: "/notes-save",
      method: "POST",
      get body() {
        return { id: noteId(), status: "PUBLISHED" };
      },
      authorized: true,
      status: 200,
    },
    {
      name: "notes-delete",
      get path() {
        return `/notes-delete?id=${noteId()}`;
      },
      method: "DELETE",
      authorized: true,
      status: 200,
    },
    // Ends the account's other sessions and keeps this one, for the last signed-in call: deleting the account.
    {
      name: "auth-logout",
      path: "/auth-logout",
      method: "POST",
      body: { scope: "others" },
      authorized: true,
      status: 200,
    },
    // Provider sign-in, with no provider configured here. The start refuses an unknown provider as JSON, never as a
    // redirect; a link's browser step, the return and the code's exchange look the unknown flow, state and code up
    // in the database.
    {
      name: "auth-oauth-authorize",
      path: "/auth-oauth-authorize?provider=nobody&redirect_to=https%3A%2F%2Fapp.example%2Fsigned-in",
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "auth-oauth-callback",
      path: "/auth-oauth-callback/nobody?state=never-started&code=x",
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_state",
    },
    {
      name: "auth-identities-link-authorize",
      path: `/auth-identities-link-authorize?flow=${"a".repeat(43)}`,
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_state",
    },
    {
      name: "auth-oauth-token",
      path: "/auth-oauth-token",
      method: "POST",
      body: { code: "never-given", codeVerifier: "v".repeat(43) },
      status: 400,
      code: "invalid_code",
    },
    { name: "auth-identities", path: "/auth-identities", method: "GET", authorized: true, status: 200 },
    // A link code never given: the statement that completes a link looks it up, and says no.
    {
      name: "auth-identities-link-complete",
      path: "/auth-identities-link-complete",
      method: "POST",
      body: { code: "never-given" },
      authorized: true,
      status: 400,
      code: "invalid_code",
    },
    // Without a token: the function boots, reads its body and refuses before any provider would be called.
    {
      name: "auth-identities-link",
      path: "/auth-identities-link",
      method: "POST",
      body: { provider: "nobody", redirectTo: "https://app.example/settings" },
      status: 401,
      code: "token_missing",
    },
    // With the token: no provider is configured here, so the body is refused, naming the field, before any statement.
    {
      name: "auth-reauthenticate-provider",
      path: "/auth-reauthenticate-provider",
      method: "POST",
      body: { provider: "nobody", redirectTo: "https://app.example/settings" },
      authorized: true,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "auth-delete-account",
      path: "/auth-delete-account",
      method: "POST",
      body: { password },
      authorized: true,
      status: 200,
    },
    // The provider is a closed local port, so the queued reset mail's delivery fails and is retried later.
    { name: "mail-dispatch", path: "/mail-dispatch", method: "POST", body: {}, dispatchSecret: true, status: 200 },
  ];
}
