import { handler as createPassword } from "../auth-create-password/handler.ts";
import { handler as login } from "../auth-login/handler.ts";
import { handler as register } from "../auth-register/handler.ts";
import { handler as requestPasswordReset } from "../auth-request-password-reset/handler.ts";
import { routeBySubpath } from "../_shared/router.ts";

/** `/auth/<action>`: the interface's paths, served by the same handlers as the single-purpose functions. */
export const handler = routeBySubpath("auth", {
  "/login": login,
  "/register": register,
  "/create-password": createPassword,
  "/request-password-reset": requestPasswordReset,
});
