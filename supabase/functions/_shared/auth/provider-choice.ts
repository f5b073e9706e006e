/**
 * What a provider sign-in or link is asked for, checked before anything is
 * stored or any provider is called: a configured provider, and an app URL
 * the browser may be sent back to. Each refusal is a 400 naming the field,
 * and no redirect; a start past the address's limit is a 429.
 *
 * @example
 * ```ts
 * const provider = configuredProvider(settings, query.provider, "provider");
 * const returnTo = allowedReturnUrl(settings, query.redirect_to, "redirect_to");
 * ```
 */
import { type IdentityProviderSettings, isAllowedRedirect, type ProviderSignInSettings } from "../config/mod.ts";
import { BadRequestError, TooManyRequestsError } from "../http/errors.ts";

/** The provider named `name`, or a 400 on `field`. */
export function configuredProvider(
  settings: ProviderSignInSettings,
  name: string,
  field: string,
): IdentityProviderSettings {
  const provider = settings.providers.get(name);
  if (provider) return provider;
  const message = `${field} must be a configured provider (${[...settings.providers.keys()].join(", ") || "none is"})`;
  throw new BadRequestError(message, [{ field, message }]);
}

/** `url` when the browser may be sent back to it (`OAUTH_REDIRECT_URLS`), else a 400 on `field`. */
export function allowedReturnUrl(settings: ProviderSignInSettings, url: string, field: string): string {
  if (isAllowedRedirect(url, settings.redirectUrls)) return url;
  const message = `${field} must be an app URL listed in OAUTH_REDIRECT_URLS`;
  throw new BadRequestError(message, [{ field, message }]);
}

/** The 429 of a sign-in or link started past the address's limit of sign-in attempts. */
export function tooManyStarts(retryAfterSeconds: number): TooManyRequestsError {
  return new TooManyRequestsError("Too many sign-in attempts; try again later", retryAfterSeconds);
}
