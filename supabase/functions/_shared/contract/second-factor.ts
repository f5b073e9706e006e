/**
 * The contract of the second factor: enrolling an authenticator app (TOTP),
 * activating it with its first code, the second step of a sign-in (a code, or
 * a recovery code), listing, removing the factor and replacing the recovery
 * codes.
 */
import { z } from "zod";
import { session } from "./accounts.ts";
import { isoTimestamp, text } from "./common.ts";
import { authenticationResponse } from "./passkeys.ts";

/** A code of the authenticator app: 6 digits. */
const totpCode = text("code").regex(/^\d{6}$/, "code must be 6 digits");

/** A recovery code as shown at activation: 25 letters and digits in groups of five; case and dashes do not matter. */
const recoveryCode = text("recoveryCode")
  // Five groups since codes grew to 125 bits; codes of four (100 bits) made before still work.
  .regex(
    /^[a-z2-7]{5}(-?[a-z2-7]{5}){3,4}$/i,
    "recoveryCode must be a recovery code (groups of five)",
  )
  .meta({
    description: "one of the recovery codes shown at activation; case and dashes do not matter",
  });

const factorId = text("factorId").regex(
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  "factorId must be a factor's id",
);

/** Body of `POST /auth/mfa/enroll`: the password, re-entered, so a stolen token alone cannot add a factor. */
export const enrollBody = z.object({ password: text("password") });
export type EnrollBody = z.infer<typeof enrollBody>;

/** `data` of `POST /auth/mfa/enroll`: the pending factor, and its secret for the authenticator app. */
export const enrollment = z.object({
  factorId: z.string(),
  otpauthUrl: z.string().meta({
    description: "otpauth://totp/Notes:<email>?secret=…&issuer=Notes&algorithm=SHA1&digits=6&period=30, for a QR code",
  }),
  secret: z.string().meta({ description: "the same secret in base32, for typing into the app by hand" }),
});
export type Enrollment = z.infer<typeof enrollment>;

/** Body of `POST /auth/mfa/activate`: the pending factor and its first code. */
export const activateBody = z.object({ factorId, code: totpCode });
export type ActivateBody = z.infer<typeof activateBody>;

/** `data` of `POST /auth/mfa/activate`: a new session at aal2, and the recovery codes, shown this once. */
export const activation = session.extend({
  recoveryCodes: z.array(z.string()).meta({
    description: "10 single-use recovery codes, shown this once and never again: the user keeps them",
  }),
});
export type Activation = z.infer<typeof activation>;

/** Body of `POST /auth/mfa/verify`. */
export const verifyFactorBody = z.object({ code: totpCode });
export type VerifyFactorBody = z.infer<typeof verifyFactorBody>;

/** Body of `POST /auth/mfa/recover`. */
export const recoverBody = z.object({ recoveryCode });
export type RecoverBody = z.infer<typeof recoverBody>;

/** `data` of `POST /auth/mfa/recover`: the aal2 session, and how many recovery codes remain. */
export const recovery = session.extend({ recoveryCodesLeft: z.number().int() });
export type Recovery = z.infer<typeof recovery>;

/** A current code of the factor, or one recovery code: what removing the factor or replacing the codes asks for. */
const proofOfFactor = {
  code: totpCode.optional(),
  recoveryCode: recoveryCode.optional(),
};
const oneProof = (body: { code?: string; recoveryCode?: string }) =>
  (body.code === undefined) !== (body.recoveryCode === undefined);
const oneProofMessage = { error: "send either code or recoveryCode", path: ["code"] };

/** Body of `POST /auth/mfa/unenroll`. */
export const unenrollBody = z.object({ factorId, ...proofOfFactor }).refine(oneProof, oneProofMessage);
export type UnenrollBody = z.infer<typeof unenrollBody>;

/** `data` of `POST /auth/mfa/unenroll`: the removed factor's id. */
export const unenrolled = z.object({ factorId: z.string() });
export type Unenrolled = z.infer<typeof unenrolled>;

/** Body of `POST /auth/mfa/recovery-codes`. */
export const recoveryCodesBody = z.object(proofOfFactor).refine(oneProof, oneProofMessage);
export type RecoveryCodesBody = z.infer<typeof recoveryCodesBody>;

/** `data` of `POST /auth/mfa/recovery-codes`: the new codes, shown this once; the old ones no longer work. */
export const recoveryCodes = z.object({ recoveryCodes: z.array(z.string()) });
export type RecoveryCodes = z.infer<typeof recoveryCodes>;

/**
 * Body of `POST /auth/reauthenticate`: exactly one proof that the session's owner is at the keyboard, the
 * password, a current code of the factor, one recovery code, or an assertion of one of the account's passkeys
 * (`passkey`, the browser's `credential.toJSON()` for the options of `POST /auth/passkeys/login/options` sent with
 * the session's token).
 */
export const reauthenticateBody = z.object({
  password: text("password").optional(),
  ...proofOfFactor,
  passkey: authenticationResponse.optional(),
}).refine(
  (body) =>
    [body.password, body.code, body.recoveryCode, body.passkey].filter((proof) => proof !== undefined).length === 1,
  { error: "send one of password, code, recoveryCode or passkey", path: ["password"] },
);
export type ReauthenticateBody = z.infer<typeof reauthenticateBody>;

/** `data` of `POST /auth/reauthenticate`: until when the session may change how the account signs in. */
export const reauthentication = z.object({
  reauthenticatedUntil: isoTimestamp,
});
export type Reauthentication = z.infer<typeof reauthentication>;

/** One factor of the account, as `GET /auth/mfa` lists it. */
export const factorInfo = z.object({
  id: z.string(),
  type: z.literal("totp"),
  /** `pending` until its first code activates it. */
  status: z.enum(["pending", "active"]),
  createdAt: isoTimestamp,
  lastUsedAt: isoTimestamp.nullable(),
});
export type FactorInfo = z.infer<typeof factorInfo>;

/** `data` of `GET /auth/mfa`. */
export const factorList = z.object({ factors: z.array(factorInfo), recoveryCodesLeft: z.number().int() });
export type FactorList = z.infer<typeof factorList>;
