/**
 * Delivery through Resend's HTTPS API (`POST /emails`), the way Supabase's
 * guide sends mail from an Edge Function: hosted functions may not open SMTP
 * connections on ports 25 and 587, and one HTTPS call needs no SMTP client.
 *
 * @example
 * ```ts
 * await sendWithResend(provider, { id: "1", recipient: "ada@example.com", subject: "Hi", body: "Hello", attempts: 1 });
 * ```
 */
import type { MailProvider } from "../config/mod.ts";
import type { OutboxMail } from "./outbox.ts";

/** A delivery the provider did not accept; the message names the status or error, never the mail. */
export class MailDeliveryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MailDeliveryError";
  }
}

/** How long one provider call may take; the outbox's shortest retry wait is longer. */
const requestTimeoutMs = 10_000;

/** Sends one mail; throws `MailDeliveryError` unless Resend accepted it. */
export async function sendWithResend(provider: MailProvider, mail: OutboxMail): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${provider.apiUrl}/emails`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${provider.apiKey}`,
        "Content-Type": "application/json",
        // A retry of an attempt whose answer was lost is then sent once, not twice.
        "Idempotency-Key": `notes-outbox-${mail.id}`,
      },
      body: JSON.stringify({ from: provider.from, to: [mail.recipient], subject: mail.subject, text: mail.body }),
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
  } catch (error) {
    throw new MailDeliveryError(error instanceof Error ? error.name : "request failed", { cause: error });
  }
  // The answer's body is not needed (it names the provider's id for the mail); read it to free the connection.
  await response.body?.cancel();
  if (!response.ok) throw new MailDeliveryError(`HTTP ${response.status}`);
}
