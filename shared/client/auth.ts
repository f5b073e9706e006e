/**
 * The account and its sessions: `client.auth`. Register, log in and out, refresh, list and end sessions, change,
 * reset and verify, sign in with an emailed code, prove the owner is at the keyboard, delete the account, and read the user and its security
 * events.
 */
import type {
  EndedSession,
  LogoutScope,
  Reauthentication,
  SecurityEvent,
  Session,
  SessionInfo,
  User,
} from "../../supabase/functions/_shared/contract/mod.ts";
import type { BodyOf, RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";

/** Paging of security events, newest first: `before` is the last `id` of the page before. */
export interface SecurityEventsOptions {
  /** 1 to 100; 20 by default. */
  limit?: number;
  before?: string;
}

/** The account's calls, through the client's transport. */
export class AuthApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Creates an account and keeps its session. */
  async register(body: BodyOf<"register">, request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("register", { body, deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /**
   * Starts an anonymous account (no email, no password) and keeps its session: a visitor writes notes at once and
   * signs up later with `upgradeAnonymous`, keeping them.
   */
  async signInAnonymously(request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("signInAnonymously", { deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /**
   * Signs up the signed-in anonymous account with a name, an email and a password, under the same id and with every
   * note, and keeps the session it answers. A taken email throws 409 `email_taken` with nothing changed.
   */
  async upgradeAnonymous(body: BodyOf<"upgradeAnonymous">, request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("upgradeAnonymous", { body, deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /**
   * Mails the signed-in anonymous account an 8-digit code at `email` to sign up with (`upgradeAnonymousWithCode`),
   * instead of a password; answers the API's message. A taken email throws 409 `email_taken`, nothing sent.
   */
  async sendUpgradeCode(email: string, request: RequestOptions = {}): Promise<string> {
    const input = { body: { email }, deadline: this.#transport.deadline(request) };
    const sent = await this.#transport.signedIn(
      input.deadline,
      (accessToken) => this.#transport.send("sendUpgradeCode", input, accessToken),
    );
    return sent.message;
  }

  /**
   * Signs up the signed-in anonymous account with a name and the code `sendUpgradeCode` mailed, under the same id
   * and with every note; the address is verified and the account has no password. Keeps the session it answers.
   */
  async upgradeAnonymousWithCode(
    body: BodyOf<"upgradeAnonymousWithCode">,
    request: RequestOptions = {},
  ): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("upgradeAnonymousWithCode", {
        body,
        deadline: this.#transport.deadline(request),
      }) as Session,
    );
  }

  /**
   * Signed in to an existing account, moves every note of the anonymous session whose `anonymousAccessToken` is
   * given into it and deletes the anonymous account; a retry moves nothing.
   */
  async mergeAnonymous(body: BodyOf<"mergeAnonymous">, request: RequestOptions = {}): Promise<{ moved: number }> {
    return await this.#transport.call("mergeAnonymous", { body, deadline: this.#transport.deadline(request) }) as {
      moved: number;
    };
  }

  /** Logs in, sending this device's token when it has one, and keeps the session. */
  async login(body: BodyOf<"login">, request: RequestOptions = {}): Promise<Session> {
    const deviceToken = body.deviceToken ?? this.#transport.storage.loadDeviceToken();
    return this.#transport.keep(
      await this.#transport.call("login", {
        body: { ...body, deviceToken },
        deadline: this.#transport.deadline(request),
      }) as Session,
    );
  }

  /**
   * Signs out on the server: `local` (the default) ends this session,
   * `others` every other session of the account, `global` all of them. This
   * client forgets its session for `local` and `global` even when the server
   * cannot be reached, so a user who signs out is signed out here.
   */
  async signOut(options: { scope?: LogoutScope } & RequestOptions = {}): Promise<void> {
    const scope = options.scope ?? "local";
    const ending = this.#transport.session;
    try {
      if (ending) {
        await this.#transport.call("signOut", { body: { scope }, deadline: this.#transport.deadline(options) });
      }
    } finally {
      if (ending && scope !== "others") this.#transport.forget(ending);
    }
  }

  /**
   * Trades the refresh token for a new session now. Concurrent callers (and
   * tabs sharing the storage) share one refresh: a request, and one retry if
   * its answer is lost or a 503. A 401 ends the session (`onUnauthorized` is called);
   * any other failure keeps it and throws. A caller whose `timeoutMs` passes
   * or whose `signal` aborts stops waiting; the shared refresh runs on for the
   * others, within the client's `timeoutMs`.
   */
  refreshSession(request: RequestOptions = {}): Promise<Session> {
    return this.#transport.deadline(request).race(this.#transport.sharedRefresh());
  }

  /** The account's live sessions, this one marked `current`. */
  async listSessions(request: RequestOptions = {}): Promise<SessionInfo[]> {
    return ((await this.#transport.call("listSessions", { deadline: this.#transport.deadline(request) })) as {
      sessions: SessionInfo[];
    }).sessions;
  }

  /** Ends one session of the account (another device, or this one). */
  async revokeSession(id: string, request: RequestOptions = {}): Promise<EndedSession> {
    return await this.#transport.call("revokeSession", {
      query: { id },
      deadline: this.#transport.deadline(request),
    }) as EndedSession;
  }

  /** The signed-in user, as the server has it now. */
  async getUser(request: RequestOptions = {}): Promise<User> {
    return ((await this.#transport.call("getUser", { deadline: this.#transport.deadline(request) })) as {
      payload: User;
    }).payload;
  }

  /** The signed-in user's own security events (sign-ins, password changes, sessions), newest first. */
  async securityEvents(options: SecurityEventsOptions & RequestOptions = {}): Promise<SecurityEvent[]> {
    const { limit, before } = options;
    const deadline = this.#transport.deadline(options);
    return ((await this.#transport.call("listSecurityEvents", { query: { limit, before }, deadline })) as {
      events: SecurityEvent[];
    }).events;
  }

  /** Changes the password and keeps the fresh session it answers; every other session of the account ends. */
  async changePassword(body: BodyOf<"changePassword">, request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("changePassword", { body, deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /** Asks for a reset code to be mailed; answers the API's message, which is the same for every email. */
  async requestPasswordReset(
    body: BodyOf<"requestPasswordReset">,
    request: RequestOptions = {},
  ): Promise<string> {
    return (await this.#transport.send(
      "requestPasswordReset",
      { body, deadline: this.#transport.deadline(request) },
      undefined,
    ))
      .message;
  }

  /**
   * Asks for an 8-digit sign-in code to be mailed to `email` (valid 10 minutes; a new one ends the last);
   * answers the API's message, which is the same for every email.
   */
  async sendSignInCode(email: string, request: RequestOptions = {}): Promise<string> {
    return (await this.#transport.send(
      "sendSignInCode",
      { body: { email }, deadline: this.#transport.deadline(request) },
      undefined,
    ))
      .message;
  }

  /**
   * Signs in with the code `sendSignInCode` mailed and keeps the session. When `mfaRequired` is true the
   * second step (`client.mfa`) is still to come, as after a password login. Throws 400 `invalid_code` for a
   * wrong, used, superseded or expired code. Where the service creates accounts by code (`OTP_SIGN_UP`), a code
   * mailed to a new address creates its account, named `options.name` (else the address's local part).
   */
  async signInWithCode(
    email: string,
    code: string,
    options: RequestOptions & { name?: string } = {},
  ): Promise<Session> {
    const { name, ...request } = options;
    return this.#transport.keep(
      await this.#transport.call("signInWithCode", {
        body: name === undefined ? { email, code } : { email, code, name },
        deadline: this.#transport.deadline(request),
      }) as Session,
    );
  }

  /** Sets a new password with a reset code and keeps the new session (every other one has ended). */
  async createPassword(body: BodyOf<"createPassword">, request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("createPassword", { body, deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /**
   * Verifies the address with the code mailed at sign-up, and keeps the session it answers. It sends the
   * session's token when the client holds one (the app the account signed up in); otherwise give `password`.
   */
  async verifyEmail(body: BodyOf<"verifyEmail">, request: RequestOptions = {}): Promise<Session> {
    return this.#transport.keep(
      await this.#transport.call("verifyEmail", { body, deadline: this.#transport.deadline(request) }) as Session,
    );
  }

  /** Asks for a new verification code; answers the API's message, which is the same for every address. */
  async resendVerification(
    body: BodyOf<"resendVerification">,
    request: RequestOptions = {},
  ): Promise<string> {
    return (await this.#transport.send(
      "resendVerification",
      { body, deadline: this.#transport.deadline(request) },
      undefined,
    ))
      .message;
  }

  /**
   * Proves the signed-in owner is at the keyboard (`POST /auth/reauthenticate`) with the password, a current code
   * of the authenticator, or a recovery code: for 5 minutes this session may then unlink an identity, link one
   * without the password, and (an account without a password) set one or delete the account. Answers until when.
   * Throws 401 `invalid_credentials` for a wrong password, 400 `invalid_code` for a wrong code.
   */
  async reauthenticate(
    proof: { password: string } | { code: string } | { recoveryCode: string },
    request: RequestOptions = {},
  ): Promise<Reauthentication> {
    return await this.#transport.call("reauthenticate", {
      body: proof,
      deadline: this.#transport.deadline(request),
    }) as Reauthentication;
  }

  /** Deletes the account with everything it owns (the password re-entered), and forgets the session. */
  async deleteAccount(body: BodyOf<"deleteAccount">, request: RequestOptions = {}): Promise<void> {
    const ending = this.#transport.session;
    await this.#transport.call("deleteAccount", { body, deadline: this.#transport.deadline(request) });
    if (ending) this.#transport.forget(ending);
  }
}
