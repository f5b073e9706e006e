/**
 * The settings of sign-in with OpenID Connect providers: which providers
 * (`OIDC_PROVIDERS`, and per provider `OIDC_<NAME>_ISSUER`, `_CLIENT_ID`,
 * `_CLIENT_SECRET`), where the browser may be sent back to
 * (`OAUTH_REDIRECT_URLS`) and the callback URL the providers know
 * (`FUNCTIONS_URL`, by default `SUPABASE_URL` + `/functions/v1`).
 *
 * @example
 * ```ts
 * const { providers, callbackUrl } = providerSignInFrom(Deno.env);
 * ```
 */
import { providerNamePattern } from "../contract/identities.ts";
import { booleanSetting, ConfigError, type Env } from "./settings.ts";

/** One provider, as its console registered this service. */
export interface IdentityProviderSettings {
  /** The name the app and the URLs use, e.g. `google`. */
  name: string;
  /** `OIDC_<NAME>_ISSUER`: where its discovery document is (`/.well-known/openid-configuration`). */
  issuer: URL;
  clientId: string;
  clientSecret: string;
}

export interface ProviderSignInSettings {
  /** By name; empty when `OIDC_PROVIDERS` is unset. */
  providers: ReadonlyMap<string, IdentityProviderSettings>;
  /** `OIDC_ALLOW_HTTP`: a provider on plain http is accepted (a local one, in tests and development). */
  allowHttp: boolean;
  /** `OAUTH_REDIRECT_URLS`: the app URLs (origin and path) the browser may be sent back to. */
  redirectUrls: readonly URL[];
  /** `<functions URL>/auth/oauth/callback`; undefined while no provider is configured. */
  callbackUrl: string | undefined;
}

function requiredSetting(env: Env, name: string, why: string): string {
  const value = env.get(name)?.trim();
  if (!value) throw new ConfigError(`${name} is not set: ${why}`);
  return value;
}

function absoluteHttpUrl(raw: string, setting: string): URL {
  if (!URL.canParse(raw)) throw new ConfigError(`${setting} must be an absolute URL, got "${raw}"`);
  const url = new URL(raw);
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`${setting} must be an http(s) URL, got "${raw}"`);
  }
  if (url.username || url.password || url.hash) {
    throw new ConfigError(`${setting} must not carry credentials or a fragment, got "${raw}"`);
  }
  return url;
}

function providerFrom(env: Env, name: string, allowHttp: boolean): IdentityProviderSettings {
  const prefix = `OIDC_${name.toUpperCase()}`;
  const why = `OIDC_PROVIDERS names ${name}`;
  const issuer = absoluteHttpUrl(requiredSetting(env, `${prefix}_ISSUER`, why), `${prefix}_ISSUER`);
  if (issuer.protocol === "http:" && !allowHttp) {
    throw new ConfigError(
      `${prefix}_ISSUER is plain http (${issuer.href}): only a local provider may be, with OIDC_ALLOW_HTTP=true`,
    );
  }
  if (issuer.search) throw new ConfigError(`${prefix}_ISSUER must not have a query, got "${issuer.href}"`);
  return {
    name,
    issuer,
    clientId: requiredSetting(env, `${prefix}_CLIENT_ID`, why),
    clientSecret: requiredSetting(env, `${prefix}_CLIENT_SECRET`, why),
  };
}

function listSetting(env: Env, name: string): string[] {
  return (env.get(name) ?? "").split(",").map((item) => item.trim()).filter(Boolean);
}

/** Reads and checks the provider settings; throws `ConfigError` on the first unusable one. */
export function providerSignInFrom(env: Env): ProviderSignInSettings {
  const allowHttp = booleanSetting(env, "OIDC_ALLOW_HTTP", false);
  const providers = new Map<string, IdentityProviderSettings>();
  for (const name of listSetting(env, "OIDC_PROVIDERS")) {
    if (!providerNamePattern.test(name)) {
      throw new ConfigError(`OIDC_PROVIDERS: "${name}" must be lower-case letters, digits and _, e.g. google`);
    }
    providers.set(name, providerFrom(env, name, allowHttp));
  }
  const redirectUrls = listSetting(env, "OAUTH_REDIRECT_URLS").map((raw) =>
    absoluteHttpUrl(raw, "OAUTH_REDIRECT_URLS")
  );
  if (providers.size === 0) return { providers, allowHttp, redirectUrls, callbackUrl: undefined };
  if (redirectUrls.length === 0) {
    throw new ConfigError("OAUTH_REDIRECT_URLS is not set: a provider sign-in needs an app URL to return to");
  }
  const functionsUrl = env.get("FUNCTIONS_URL") ||
    (env.get("SUPABASE_URL") ? `${env.get("SUPABASE_URL")!.replace(/\/+$/, "")}/functions/v1` : "");
  if (!functionsUrl) {
    throw new ConfigError("Neither FUNCTIONS_URL nor SUPABASE_URL is set: providers need the callback's URL");
  }
  const callbackUrl = `${absoluteHttpUrl(functionsUrl, "FUNCTIONS_URL").href.replace(/\/+$/, "")}/auth/oauth/callback`;
  return { providers, allowHttp, redirectUrls, callbackUrl };
}

/**
 * Whether the browser may be sent to `candidate`: an absolute http(s) URL with the origin and path of one of
 * `allowed`, any query of the app's, and no credentials or fragment (which would survive the redirect).
 */
export function isAllowedRedirect(candidate: string, allowed: readonly URL[]): boolean {
  if (!URL.canParse(candidate)) return false;
  const url = new URL(candidate);
  if (url.username || url.password || url.hash || candidate.includes("#")) return false;
  return allowed.some((entry) => entry.origin === url.origin && entry.pathname === url.pathname);
}
