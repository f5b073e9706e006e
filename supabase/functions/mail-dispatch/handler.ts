import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { isOneOf } from "../_shared/http/api-key.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { ServiceUnavailableError, UnauthorizedError } from "../_shared/http/errors.ts";
import { dispatchDueMail, providerDelivery } from "../_shared/mail/dispatch.ts";

/**
 * `POST /mail-dispatch`: delivers the mails that are due through the
 * configured provider. Supabase Cron calls it every minute (see the
 * `app.schedule_mail_dispatch()` migration); calling it more often only sends
 * due mails sooner, each still once. The public `apikey` is not enough: the
 * caller must also send a secret (`Authorization: Bearer <MAIL_DISPATCH_SECRET
 * or the service-role key>`), or anyone could make the service call the mail
 * provider as often as they like.
 */
export const handler = defineEndpoint({
  name: "mail-dispatch",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const given = /^Bearer (\S+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
    if (!given || !isOneOf(given, getConfig().mailDispatchSecrets)) {
      throw new UnauthorizedError("invalid_dispatch_secret", "mail-dispatch needs its secret in Authorization: Bearer");
    }
    const deliver = providerDelivery();
    if (!deliver) {
      throw new ServiceUnavailableError({ message: "No mail provider is configured (RESEND_API_KEY, MAIL_FROM)" });
    }
    return authSuccess(200, "Mail dispatched", await dispatchDueMail(deliver));
  },
});
