/**
 * The admin page's rows: an account with its status, its note count (never
 * its notes) and buttons to suspend or reactivate it and to show its security
 * events; and one security event.
 *
 * @example
 * ```ts
 * list.append(accountItem(user, { setStatus, showEvents }));
 * ```
 */
import type { ManagedUser, SecurityEvent, User } from "../../../shared/index.ts";

export interface AccountActions {
  setStatus(status: User["status"]): Promise<void>;
  showEvents(): Promise<void>;
}

function button(text: string, onClick: () => Promise<void>): HTMLButtonElement {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  element.addEventListener("click", () => void onClick());
  return element;
}

export function accountItem(user: ManagedUser, actions: AccountActions): HTMLLIElement {
  const item = document.createElement("li");
  const label = document.createElement("span");
  label.textContent = `${user.name} · ${user.email} · ${user.status} · ${user.noteCount} notes`;
  const suspended = user.status === "SUSPENDED";
  item.append(
    label,
    button(suspended ? "Reactivate" : "Suspend", () => actions.setStatus(suspended ? "ACTIVE" : "SUSPENDED")),
    button("Show events", actions.showEvents),
  );
  return item;
}

export function eventItem(event: SecurityEvent): HTMLLIElement {
  const item = document.createElement("li");
  const where = [event.address, event.userAgent].filter(Boolean).join(", ");
  item.textContent = `${new Date(event.at).toLocaleString()} · ${event.type}${where ? ` · ${where}` : ""}`;
  return item;
}
