/**
 * Binding a provider sign-in or link to the browser that started it (RFC 9700 4.7.1): the navigation that starts
 * the flow sets a cookie on the functions' origin holding a random value, and the flow keeps only its HMAC; the
 * callback finds the cookie of its flow and the database goes on only when the HMACs match. `HttpOnly`, so no
 * script reads it; `SameSite=Lax`, so the provider's top-level redirect back brings it; `Secure` when the functions
 * are served over https; its path is the provider's callback, the one URL that needs it. Each flow has a cookie of
 * its own (named after its state's hash), so two sign-ins in two tabs do not undo each other.
 *
 * @example
 * ```ts
 * const binding = await newBrowserBinding(jwtSecret);
 * // ... store binding.hash with the flow; answer with Set-Cookie: bindingCookie(stateHash, binding, callbackUrl) ...
 * const presented = await presentedBinding(req, jwtSecret, stateHash);
 * ```
 */
import { parse, serialize } from "cookie";
import { randomState } from "openid-client";
import { hexMac } from "./derived-keys.ts";

/** As long as the flow it binds. */
const bindingSeconds = 10 * 60;

/** The cookie of the flow of `stateHash`: a prefix of the hash is enough to tell a browser's flows apart. */
function cookieNameOf(stateHash: string): string {
  return `notes_flow_${stateHash.slice(0, 16)}`;
}

function cookieOf(stateHash: string, value: string, callbackUrl: string, maxAge: number): string {
  const url = new URL(callbackUrl);
  return serialize(cookieNameOf(stateHash), value, {
    httpOnly: true,
    secure: url.protocol === "https:",
    sameSite: "lax",
    path: url.pathname,
    maxAge,
  });
}

/** A browser's binding: the cookie's random value (256 bits), and its HMAC that the flow keeps. */
export interface BrowserBinding {
  value: string;
  hash: string;
}

/** A new binding, to store with a flow (or a link's flow, once its browser comes). */
export async function newBrowserBinding(jwtSecret: Uint8Array): Promise<BrowserBinding> {
  const value = randomState();
  return { value, hash: await hexMac(jwtSecret, "provider sign-in browser", value) };
}

/** The Set-Cookie of `binding` for the flow of `stateHash`, sent only to the callback URL of its provider. */
export function bindingCookie(stateHash: string, binding: BrowserBinding, callbackUrl: string): string {
  return cookieOf(stateHash, binding.value, callbackUrl, bindingSeconds);
}

/** The HMAC of the binding `req`'s browser holds for the flow of `stateHash`, or undefined when it holds none. */
export async function presentedBinding(
  req: Request,
  jwtSecret: Uint8Array,
  stateHash: string,
): Promise<string | undefined> {
  const value = parse(req.headers.get("cookie") ?? "")[cookieNameOf(stateHash)];
  return value ? await hexMac(jwtSecret, "provider sign-in browser", value) : undefined;
}

/** The Set-Cookie that removes the spent flow's cookie from the browser. */
export function spentBinding(stateHash: string, callbackUrl: string): string {
  return cookieOf(stateHash, "", callbackUrl, 0);
}

/**
 * Where a flow started by an API call (a link, a proof at a provider) sends the browser first: this service's
 * browser step (`GET /auth/identities/link/authorize`), which binds the flow to the browser that opens it and goes on
 * to the provider. An API call can set no cookie on the functions' origin; a navigation can.
 */
export function browserStepUrl(functionsUrl: string | undefined, state: string): string {
  const url = new URL(`${functionsUrl}/auth/identities/link/authorize`);
  url.searchParams.set("flow", state);
  return url.href;
}
