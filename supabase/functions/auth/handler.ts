import { handler as changePassword } from "../auth-change-password/handler.ts";
import { handler as createPassword } from "../auth-create-password/handler.ts";
import { handler as deleteAccount } from "../auth-delete-account/handler.ts";
import { handler as events } from "../auth-events/handler.ts";
import { handler as login } from "../auth-login/handler.ts";
import { handler as logout } from "../auth-logout/handler.ts";
import { handler as refresh } from "../auth-refresh/handler.ts";
import { handler as sessions } from "../auth-sessions/handler.ts";
import { handler as user } from "../auth-user/handler.ts";
import { handler as register } from "../auth-register/handler.ts";
import { handler as requestPasswordReset } from "../auth-request-password-reset/handler.ts";
import { handler as resendVerification } from "../auth-resend-verification/handler.ts";
import { handler as verifyEmail } from "../auth-verify-email/handler.ts";
import { handler as mfa } from "../auth-mfa/handler.ts";
import { handler as mfaActivate } from "../auth-mfa-activate/handler.ts";
import { handler as mfaEnroll } from "../auth-mfa-enroll/handler.ts";
import { handler as mfaRecover } from "../auth-mfa-recover/handler.ts";
import { handler as mfaRecoveryCodes } from "../auth-mfa-recovery-codes/handler.ts";
import { handler as mfaUnenroll } from "../auth-mfa-unenroll/handler.ts";
import { handler as mfaVerify } from "../auth-mfa-verify/handler.ts";
import { handler as oauthAuthorize } from "../auth-oauth-authorize/handler.ts";
import { handler as oauthCallback } from "../auth-oauth-callback/handler.ts";
import { handler as oauthToken } from "../auth-oauth-token/handler.ts";
import { handler as identities } from "../auth-identities/handler.ts";
import { handler as identitiesLink } from "../auth-identities-link/handler.ts";
import { handler as identitiesLinkComplete } from "../auth-identities-link-complete/handler.ts";
import { handler as identitiesLinkAuthorize } from "../auth-identities-link-authorize/handler.ts";
import { handler as reauthenticate } from "../auth-reauthenticate/handler.ts";
import { handler as reauthenticateProvider } from "../auth-reauthenticate-provider/handler.ts";
import { handler as passkeys } from "../auth-passkeys/handler.ts";
import { handler as passkeysLogin } from "../auth-passkeys-login/handler.ts";
import { handler as passkeysLoginOptions } from "../auth-passkeys-login-options/handler.ts";
import { handler as passkeysRegister } from "../auth-passkeys-register/handler.ts";
import { handler as passkeysRegisterOptions } from "../auth-passkeys-register-options/handler.ts";
import { handler as otp } from "../auth-otp/handler.ts";
import { handler as otpVerify } from "../auth-otp-verify/handler.ts";
// Anonymous accounts.
import { handler as anonymous } from "../auth-anonymous/handler.ts";
import { handler as anonymousUpgrade } from "../auth-anonymous-upgrade/handler.ts";
import { handler as anonymousUpgradeCode } from "../auth-anonymous-upgrade-code/handler.ts";
import { handler as anonymousUpgradeVerify } from "../auth-anonymous-upgrade-verify/handler.ts";
import { handler as anonymousMerge } from "../auth-anonymous-merge/handler.ts";
import { routeBySubpath } from "../_shared/http/router.ts";

/** `/auth/<action>`: the interface's paths, served by the same handlers as the single-purpose functions. */
export const handler = routeBySubpath("auth", {
  "/login": login,
  "/register": register,
  "/create-password": createPassword,
  "/request-password-reset": requestPasswordReset,
  "/refresh": refresh,
  "/logout": logout,
  "/sessions": sessions,
  "/user": user,
  "/verify-email": verifyEmail,
  "/resend-verification": resendVerification,
  "/change-password": changePassword,
  "/delete-account": deleteAccount,
  "/events": events,
  "/mfa": mfa,
  "/mfa/enroll": mfaEnroll,
  "/mfa/activate": mfaActivate,
  "/mfa/verify": mfaVerify,
  "/mfa/recover": mfaRecover,
  "/mfa/unenroll": mfaUnenroll,
  "/mfa/recovery-codes": mfaRecoveryCodes,
  "/oauth/authorize": oauthAuthorize,
  // A redirect URI per provider (/oauth/callback/<provider>); without one, the callback finds no flow.
  "/oauth/callback": oauthCallback,
  "/oauth/callback/*": oauthCallback,
  "/oauth/token": oauthToken,
  "/identities": identities,
  "/identities/link": identitiesLink,
  "/identities/link/complete": identitiesLinkComplete,
  "/identities/link/authorize": identitiesLinkAuthorize,
  "/reauthenticate": reauthenticate,
  "/reauthenticate/provider": reauthenticateProvider,
  "/passkeys": passkeys,
  "/passkeys/register/options": passkeysRegisterOptions,
  "/passkeys/register": passkeysRegister,
  "/passkeys/login/options": passkeysLoginOptions,
  "/passkeys/login": passkeysLogin,
  "/otp": otp,
  "/otp/verify": otpVerify,
  // Anonymous accounts.
  "/anonymous": anonymous,
  "/anonymous/upgrade": anonymousUpgrade,
  "/anonymous/upgrade/code": anonymousUpgradeCode,
  "/anonymous/upgrade/verify": anonymousUpgradeVerify,
  "/anonymous/merge": anonymousMerge,
});
