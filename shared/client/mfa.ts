/** The signed-in user's second factor (an authenticator app) and its recovery codes: `client.mfa`. */
import type {
  Activation,
  Enrollment,
  FactorList,
  Recovery,
  Session,
} from "../../supabase/functions/_shared/contract/mod.ts";
import type { BodyOf, RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";

/**
 * The signed-in user's second factor, an authenticator app (TOTP):
 * `client.mfa`. A code is accepted once, within ±30 s; 5 wrong
 * codes lock the factor for 15 minutes (429 with `retryAfter`), whoever
 * sends them. A session whose `mfaRequired` is true reaches nothing but
 * `verify`, `recover`, `auth.getUser` and a local sign-out until it makes the
 * second step; everything else throws 403 `mfa_required`.
 */
export interface MfaApi {
  /**
   * Starts enrolling, with the password re-entered: answers the pending factor's id, the `otpauthUrl` to show
   * as a QR code and the `secret` to type by hand, both this once. Throws 409 `factor_exists` when the account
   * has an active factor.
   */
  enroll(body: BodyOf<"mfaEnroll">, request?: RequestOptions): Promise<Enrollment>;
  /**
   * Activates the pending factor with its first code. Keeps the new session it answers (every other session
   * of the account has ended) and answers it with the 10 `recoveryCodes`: show them once, they are never
   * shown again. Throws 400 `invalid_code` for a wrong code.
   */
  activate(body: BodyOf<"mfaActivate">, request?: RequestOptions): Promise<Activation>;
  /** The second step of a sign-in whose `mfaRequired` is true: keeps and answers the session it makes. */
  verify(body: BodyOf<"mfaVerify">, request?: RequestOptions): Promise<Session>;
  /**
   * The second step with a recovery code instead (each works once): keeps the session and answers it with
   * `recoveryCodesLeft`.
   */
  recover(body: BodyOf<"mfaRecover">, request?: RequestOptions): Promise<Recovery>;
  /** The account's factors (one active, or one pending) and how many recovery codes remain. */
  list(request?: RequestOptions): Promise<FactorList>;
  /**
   * Removes the factor, with a current code or a recovery code; needs a session that made the second step.
   * Every other session of the account ends; this one is kept.
   */
  unenroll(
    body: { factorId: string; code: string } | { factorId: string; recoveryCode: string },
    request?: RequestOptions,
  ): Promise<void>;
  /**
   * Replaces the recovery codes, with a current code or a recovery code; answers the new ones (show them once).
   * Every other session of the account ends.
   */
  regenerateRecoveryCodes(
    body: { code: string } | { recoveryCode: string },
    request?: RequestOptions,
  ): Promise<string[]>;
}

/** The second-factor calls, through the client's transport. */
export function mfaApi(transport: Transport): MfaApi {
  return {
    enroll: async (body, request = {}) =>
      await transport.call("mfaEnroll", { body, deadline: transport.deadline(request) }) as Enrollment,
    activate: async (body, request = {}) => {
      const activation = await transport.call("mfaActivate", {
        body,
        deadline: transport.deadline(request),
      }) as Activation;
      const { recoveryCodes: _shownOnce, ...session } = activation;
      transport.keep(session);
      return activation;
    },
    verify: async (body, request = {}) =>
      transport.keep(await transport.call("mfaVerify", { body, deadline: transport.deadline(request) }) as Session),
    recover: async (body, request = {}) => {
      const recovery = await transport.call("mfaRecover", { body, deadline: transport.deadline(request) }) as Recovery;
      const { recoveryCodesLeft: _left, ...session } = recovery;
      transport.keep(session);
      return recovery;
    },
    list: async (request = {}) =>
      await transport.call("mfaList", { deadline: transport.deadline(request) }) as FactorList,
    unenroll: async (body, request = {}) => {
      await transport.call("mfaUnenroll", { body, deadline: transport.deadline(request) });
    },
    regenerateRecoveryCodes: async (body, request = {}) =>
      ((await transport.call("mfaRecoveryCodes", { body, deadline: transport.deadline(request) })) as {
        recoveryCodes: string[];
      }).recoveryCodes,
  };
}
