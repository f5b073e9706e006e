/**
 * The settings of passkeys (WebAuthn): the relying party's id (`PASSKEY_RP_ID`, the domain passkeys are bound to),
 * its name as authenticators show it (`PASSKEY_RP_NAME`), and the app origins whose pages may run a ceremony
 * (`PASSKEY_ORIGINS`). Unset, they suit the local stack: `localhost`, on any port over http, as browsers allow
 * (a browser runs no ceremony on an IP address such as 127.0.0.1: an IP is never a relying party id).
 *
 * @example
 * ```ts
 * const { rpId, allowsOrigin } = passkeySettingsFrom(Deno.env);
 * ```
 */
import { ConfigError, type Env } from "./settings.ts";

export interface PasskeySettings {
  /** `PASSKEY_RP_ID`: a host name, never an IP address; every origin's host is it or one of its subdomains. */
  rpId: string;
  /** `PASSKEY_RP_NAME`: what an authenticator shows beside the account. */
  rpName: string;
  /** `PASSKEY_ORIGINS` as written (normalised), or empty when unset: then any `http://localhost:<port>`. */
  origins: readonly string[];
}

// A DNS host name: labels of letters, digits and hyphens.
const hostNamePattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const ipv4Pattern = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Whether `host` is the relying party's id or a subdomain of it. */
function withinRpId(host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`);
}

function originFrom(raw: string, rpId: string): string {
  if (!URL.canParse(raw)) {
    throw new ConfigError(`PASSKEY_ORIGINS: "${raw}" must be an origin such as https://app.example`);
  }
  const url = new URL(raw);
  if (url.origin !== raw.replace(/\/$/, "")) {
    throw new ConfigError(`PASSKEY_ORIGINS: "${raw}" must be an origin alone (scheme, host, port), no path`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && url.hostname === "localhost")) {
    throw new ConfigError(`PASSKEY_ORIGINS: "${raw}" must be https (browsers allow http on localhost only)`);
  }
  if (!withinRpId(url.hostname, rpId)) {
    throw new ConfigError(`PASSKEY_ORIGINS: "${raw}" is not on PASSKEY_RP_ID ${rpId} or a subdomain of it`);
  }
  return url.origin;
}

/** Reads and checks the passkey settings; throws `ConfigError` on the first unusable one. */
export function passkeySettingsFrom(env: Env): PasskeySettings {
  const rpId = (env.get("PASSKEY_RP_ID") || "localhost").trim().toLowerCase();
  if (!hostNamePattern.test(rpId) || ipv4Pattern.test(rpId)) {
    throw new ConfigError(`PASSKEY_RP_ID must be a host name (no scheme, port or IP address), got "${rpId}"`);
  }
  const rpName = (env.get("PASSKEY_RP_NAME") || "Notes").trim();
  if (rpName.length > 64) throw new ConfigError("PASSKEY_RP_NAME must be at most 64 characters");
  const origins = (env.get("PASSKEY_ORIGINS") ?? "").split(",").map((item) => item.trim()).filter(Boolean)
    .map((raw) => originFrom(raw, rpId));
  if (origins.length === 0 && rpId !== "localhost") {
    throw new ConfigError(`PASSKEY_ORIGINS is not set: name the app's origins on ${rpId}, e.g. https://${rpId}`);
  }
  return { rpId, rpName, origins };
}

/** Whether a ceremony's page at `origin` may use these passkeys. */
export function allowsPasskeyOrigin(settings: PasskeySettings, origin: string): boolean {
  if (settings.origins.length > 0) return settings.origins.includes(origin);
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return url.protocol === "http:" && url.hostname === "localhost" && url.origin === origin;
}
