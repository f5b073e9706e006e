import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { ServiceUnavailableError } from "../_shared/http-error.ts";
import { dispatchDueMail, providerDelivery } from "../_shared/mail/dispatch.ts";

/**
 * `POST /mail-dispatch`: delivers the mails that are due through the
 * configured provider. Supabase Cron calls it every minute (see the
 * `app.schedule_mail_dispatch()` migration); calling it more often only sends
 * due mails sooner, each still once.
 */
export const handler = defineEndpoint({
  name: "mail-dispatch",
  envelope: "auth",
  methods: ["POST"],
  handle: async () => {
    const deliver = providerDelivery();
    if (!deliver) {
      throw new ServiceUnavailableError({ message: "No mail provider is configured (RESEND_API_KEY, MAIL_FROM)" });
    }
    return authSuccess(200, "Mail dispatched", await dispatchDueMail(deliver));
  },
});
