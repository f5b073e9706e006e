/**
 * One row of the sessions list: the device as its browser named itself, when
 * it was last active, and a button that ends it.
 *
 * @example
 * ```ts
 * list.append(sessionItem(session, () => client.auth.revokeSession(session.id)));
 * ```
 */
import type { SessionInfo } from "../../../shared/index.ts";

export function sessionItem(session: SessionInfo, end: () => Promise<void>): HTMLLIElement {
  const item = document.createElement("li");
  const label = document.createElement("span");
  const device = session.userAgent ?? "Unknown device";
  label.textContent = `${session.current ? "This device" : device} · active ${
    new Date(session.lastActiveAt).toLocaleString()
  }`;
  const button = document.createElement("button");
  button.type = "button";
  // One word for signing out, here as in the header; the row says which device.
  button.textContent = "Sign out";
  button.setAttribute("aria-label", `Sign out ${session.current ? "this device" : device}`);
  button.addEventListener("click", () => void end());
  item.append(label, button);
  return item;
}
