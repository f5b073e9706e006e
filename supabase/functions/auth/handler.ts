import { loadedOnFirstRequest as lazy, routeBySubpath } from "../_shared/http/router.ts";

const oauthCallback = lazy(() => import("../auth-oauth-callback/handler.ts"));

/**
 * `/auth/<action>`: the interface's paths, served by the same handlers as the single-purpose functions. Each route's
 * module loads on its first request, so a cold start loads the router and the route asked for, not the passkey
 * verifier, the provider client and the password hashing of every other route.
 */
export const handler = routeBySubpath("auth", {
  "/login": lazy(() => import("../auth-login/handler.ts")),
  "/register": lazy(() => import("../auth-register/handler.ts")),
  "/create-password": lazy(() => import("../auth-create-password/handler.ts")),
  "/request-password-reset": lazy(() => import("../auth-request-password-reset/handler.ts")),
  "/refresh": lazy(() => import("../auth-refresh/handler.ts")),
  "/logout": lazy(() => import("../auth-logout/handler.ts")),
  "/sessions": lazy(() => import("../auth-sessions/handler.ts")),
  "/user": lazy(() => import("../auth-user/handler.ts")),
  "/verify-email": lazy(() => import("../auth-verify-email/handler.ts")),
  "/resend-verification": lazy(() => import("../auth-resend-verification/handler.ts")),
  "/change-password": lazy(() => import("../auth-change-password/handler.ts")),
  "/delete-account": lazy(() => import("../auth-delete-account/handler.ts")),
  "/events": lazy(() => import("../auth-events/handler.ts")),
  "/mfa": lazy(() => import("../auth-mfa/handler.ts")),
  "/mfa/enroll": lazy(() => import("../auth-mfa-enroll/handler.ts")),
  "/mfa/activate": lazy(() => import("../auth-mfa-activate/handler.ts")),
  "/mfa/verify": lazy(() => import("../auth-mfa-verify/handler.ts")),
  "/mfa/recover": lazy(() => import("../auth-mfa-recover/handler.ts")),
  "/mfa/unenroll": lazy(() => import("../auth-mfa-unenroll/handler.ts")),
  "/mfa/recovery-codes": lazy(() => import("../auth-mfa-recovery-codes/handler.ts")),
  "/oauth/authorize": lazy(() => import("../auth-oauth-authorize/handler.ts")),
  // A redirect URI per provider (/oauth/callback/<provider>); without one, the callback finds no flow.
  "/oauth/callback": oauthCallback,
  "/oauth/callback/*": oauthCallback,
  "/oauth/token": lazy(() => import("../auth-oauth-token/handler.ts")),
  "/identities": lazy(() => import("../auth-identities/handler.ts")),
  "/identities/link": lazy(() => import("../auth-identities-link/handler.ts")),
  "/identities/link/complete": lazy(() => import("../auth-identities-link-complete/handler.ts")),
  "/identities/link/authorize": lazy(() => import("../auth-identities-link-authorize/handler.ts")),
  "/reauthenticate": lazy(() => import("../auth-reauthenticate/handler.ts")),
  "/reauthenticate/provider": lazy(() => import("../auth-reauthenticate-provider/handler.ts")),
  "/passkeys": lazy(() => import("../auth-passkeys/handler.ts")),
  "/passkeys/register/options": lazy(() => import("../auth-passkeys-register-options/handler.ts")),
  "/passkeys/register": lazy(() => import("../auth-passkeys-register/handler.ts")),
  "/passkeys/login/options": lazy(() => import("../auth-passkeys-login-options/handler.ts")),
  "/passkeys/login": lazy(() => import("../auth-passkeys-login/handler.ts")),
  "/otp": lazy(() => import("../auth-otp/handler.ts")),
  "/otp/verify": lazy(() => import("../auth-otp-verify/handler.ts")),
  // Anonymous accounts.
  "/anonymous": lazy(() => import("../auth-anonymous/handler.ts")),
  "/anonymous/upgrade": lazy(() => import("../auth-anonymous-upgrade/handler.ts")),
  "/anonymous/upgrade/code": lazy(() => import("../auth-anonymous-upgrade-code/handler.ts")),
  "/anonymous/upgrade/verify": lazy(() => import("../auth-anonymous-upgrade-verify/handler.ts")),
  "/anonymous/merge": lazy(() => import("../auth-anonymous-merge/handler.ts")),
});
