/**
 * `LOCAL_IDENTITY_PROVIDER=true npm start` (or `npm run demo`): a real
 * OpenID Connect provider on a loopback port, configured as the provider
 * `local`, so provider sign-in can be tried with no Google project. Any login
 * name signs in at its page, as `<name>@example.com`. It is the tests' own
 * provider (`dev/harness/identity-provider.ts`), a development dependency.
 */
import { booleanSetting } from "../supabase/functions/_shared/config/mod.ts";
import { type IdentityProvider, localProviderSettings, startIdentityProvider } from "./harness/identity-provider.ts";

/** The demo's page on Vite's first port: where the browser may return when OAUTH_REDIRECT_URLS names nowhere. */
const demoPage = "http://127.0.0.1:5173/";

/**
 * Starts the provider when LOCAL_IDENTITY_PROVIDER is true, with `functionsUrl`'s callback as its client's, and
 * adds it to the functions' settings (OIDC_PROVIDERS and `local`'s OIDC_LOCAL_*; OIDC_ALLOW_HTTP, as it is plain
 * http; OAUTH_REDIRECT_URLS, the demo's page, unless set). Undefined when not asked for.
 */
export async function startLocalIdentityProvider(functionsUrl: string): Promise<IdentityProvider | undefined> {
  if (!booleanSetting(Deno.env, "LOCAL_IDENTITY_PROVIDER", false)) return undefined;
  const provider = await startIdentityProvider({
    redirectUris: [`${functionsUrl}/auth/oauth/callback/local`],
    anyone: true,
  });
  const listed = Deno.env.get("OIDC_PROVIDERS");
  for (const [name, value] of Object.entries(localProviderSettings(provider))) Deno.env.set(name, value);
  if (listed) Deno.env.set("OIDC_PROVIDERS", `${listed},local`);
  if (!Deno.env.get("OAUTH_REDIRECT_URLS")) Deno.env.set("OAUTH_REDIRECT_URLS", demoPage);
  return provider;
}
