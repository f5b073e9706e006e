/**
 * Builds the OpenAPI 3.1 document of the service from the contract's zod
 * schemas (zod 4's own JSON Schema output) and the operations table of
 * `shared/`. Nothing in it is written by hand but prose and examples.
 *
 * @example
 * ```ts
 * import { buildOpenApiDocument } from "./document.ts";
 * const json = JSON.stringify(buildOpenApiDocument(), null, 2);
 * ```
 */
import { z } from "zod";
import {
  authErrorEnvelope,
  authSuccessEnvelope,
  type EnvelopeKind,
  errorCodes,
  errorStatuses,
  factorInfo,
  limits,
  managedUser,
  notesErrorEnvelope,
  notesSuccessEnvelope,
  pagination,
  securityEvent,
  user,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { bodyNames, dataNames, errorEnvelopeNames, eventDataNames, eventStreamName } from "./component-names.ts";
import {
  type OperationName,
  operations,
  type OperationSpec,
  pathOf,
  type RedirectSuccess,
  type StreamEvents,
} from "../../shared/operations.ts";
import { errorExample } from "./error-examples.ts";
import { requestExamples, successExamples } from "./examples.ts";

type JsonObject = Record<string, unknown>;

/** The local stack's base URL with its default port, as `npm start` prints it. */
export const localServerUrl = "http://127.0.0.1:54321/functions/v1";

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function nameOf(names: Map<z.ZodType, string>, schema: z.ZodType): string {
  const name = names.get(schema);
  if (!name) {
    throw new Error("A schema of the operations table has no component name");
  }
  return name;
}

/** `AuthSessionEnvelope`, `NotesNoteEnvelope`, ...: the success envelope of `kind` around `data`. */
function successEnvelopeName(kind: EnvelopeKind, data: z.ZodType): string {
  return `${kind === "auth" ? "Auth" : "Notes"}${nameOf(dataNames, data)}Envelope`;
}

/** Runs zod's JSON Schema output over a registry and keeps the schemas, each ready to be a component. */
function components(
  registry: z.core.$ZodRegistry<{ id: string }>,
  io: "input" | "output",
): JsonObject {
  const { schemas } = z.toJSONSchema(registry, {
    io,
    uri: (id) => `#/components/schemas/${id}`,
  });
  const result: JsonObject = {};
  for (const [name, schema] of Object.entries(schemas)) {
    // Components use OpenAPI 3.1's default dialect, JSON Schema 2020-12 as zod writes it; no ids of their own.
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    result[name] = rest;
  }
  return result;
}

function componentSchemas(): JsonObject {
  // Requests are documented as clients send them (before trimming and defaults), answers as the API sends them.
  const requests = z.registry<{ id: string }>();
  for (const [schema, id] of bodyNames) requests.add(schema, { id });
  const answers = z.registry<{ id: string }>();
  answers.add(user, { id: "User" });
  answers.add(pagination, { id: "Pagination" });
  answers.add(securityEvent, { id: "SecurityEvent" });
  answers.add(managedUser, { id: "ManagedUser" });
  answers.add(factorInfo, { id: "FactorInfo" });
  for (const [schema, id] of dataNames) answers.add(schema, { id });
  for (const [schema, id] of eventDataNames) answers.add(schema, { id });
  answers.add(authErrorEnvelope, { id: errorEnvelopeNames.auth });
  answers.add(notesErrorEnvelope, { id: errorEnvelopeNames.notes });
  // Operations that answer the same data share one envelope component.
  const envelopeIds = new Set<string>();
  const specs: readonly OperationSpec[] = Object.values(operations);
  for (const { envelope, success } of specs) {
    if (!("data" in success)) continue;
    const id = successEnvelopeName(envelope, success.data);
    if (envelopeIds.has(id)) continue;
    envelopeIds.add(id);
    answers.add(
      envelope === "auth" ? authSuccessEnvelope(success.data) : notesSuccessEnvelope(success.data),
      { id },
    );
  }
  return {
    ...components(requests, "input"),
    ...components(answers, "output"),
    [eventStreamName]: {
      type: "string",
      description: "Server-sent events (WHATWG HTML, section 9.2): blocks of `event:`, `id:` and `data:` lines, " +
        "each ended by an empty line; `data` is one line of JSON. Lines starting with `:` are comments, `retry:` " +
        "the milliseconds to wait before reconnecting.",
    },
  };
}

/** The value schema below a query parameter's string parsing, defaults and transforms. */
function valueSchemaOf(schema: z.core.$ZodType): z.core.$ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) {
    return valueSchemaOf(schema.unwrap());
  }
  if (schema instanceof z.ZodPipe) {
    // A pipe into a transform yields the transform's result, which JSON Schema cannot show; its input can.
    return valueSchemaOf(
      schema.out instanceof z.ZodTransform ? schema.in : schema.out,
    );
  }
  return schema;
}

/** The query parameters of `query`, with their types, ranges and defaults as the contract parses them. */
function queryParameters(query: z.ZodObject): JsonObject[] {
  return Object.entries(query.shape).map(([name, field]) => {
    const fieldSchema = field as z.ZodType;
    const omitted = fieldSchema.safeParse(undefined);
    const { $schema: _dialect, ...schema } = z.toJSONSchema(
      valueSchemaOf(fieldSchema),
      { io: "output" },
    );
    if (omitted.success) schema.default = omitted.data;
    return { name, in: "query", required: !omitted.success, schema };
  });
}

/** The parameters written `{name}` in the operation's path. */
function pathParameters(parameters: z.ZodObject): JsonObject[] {
  return Object.entries(parameters.shape).map(([name, field]) => {
    const { $schema: _dialect, ...schema } = z.toJSONSchema(field as z.ZodType, { io: "output" });
    return { name, in: "path", required: true, schema };
  });
}

/** The optional request headers an operation reads (`Idempotency-Key`). */
function headerParameters(spec: OperationSpec): JsonObject[] {
  return (spec.headers ?? []).map(({ name, schema, description }) => {
    const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, {
      io: "input",
    });
    return {
      name,
      in: "header",
      required: false,
      description,
      schema: jsonSchema,
    };
  });
}

const reasons: Record<number, string> = {
  400: "Bad Request: a missing or invalid field or parameter, named in the message; `fields` lists every problem; " +
    "(invalid_state) a provider's return that no sign-in started here, or one already completed",
  401: "Unauthorized: a missing or wrong `apikey`, wrong credentials, or a refused token; for a bearer token " +
    "`WWW-Authenticate` says the same as `code`",
  403: "Forbidden: the account is suspended, its address is not verified, (admin operations) it is not an ADMIN, " +
    "or (mfa_required) the session has not made the second step of the account's second factor: send a code to " +
    "`/auth/mfa/verify` or a recovery code to `/auth/mfa/recover` first",
  404: "Not Found: no such note, session, user, second factor, linked identity or passkey",
  405: "Method Not Allowed; `Allow` lists the methods served",
  409: "Conflict: the email is already registered (register), the account has a second factor already " +
    "(enrolment), the note has changed since `expectedUpdatedAt` (with the stored note as `note`; nothing was " +
    "changed), (last_sign_in_method) the identity or passkey is the account's only way to sign in, " +
    "(identity_already_linked) another account linked that provider identity first, or (passkey_exists, " +
    "passkey_limit_reached) the passkey is registered already, or the account has 10",
  410: "Gone: the cursor needs deletions that are no longer kept; sync again without `since`",
  422: "Unprocessable Content: the `Idempotency-Key` was already used for a create with a different body",
  413: `Payload Too Large: the body is over ${limits.bodyMaxBytes} bytes`,
  408: "Request Timeout: the body did not arrive in time",
  415: "Unsupported Media Type: the body must be application/json",
  429: "Too Many Requests: a limit on attempts is reached, or the second factor is locked after wrong codes; " +
    "retry after `Retry-After` seconds",
  500: "Internal Server Error; the detail is in the server log only",
  503: "Service Unavailable: the database could not be reached in time; retry after `Retry-After` seconds",
};

/** What an error status means, and the codes it can carry (docs/errors.md says what each asks of an app). */
function errorDescription(status: number): string {
  const codes = errorCodes.filter((code) => errorStatuses[code] === status).map((code) => `\`${code}\``);
  return `${reasons[status] ?? "Error"}. \`code\`: ${codes.join(", ")}`;
}

const errorHeaders: Record<number, JsonObject> = {
  405: {
    Allow: {
      description: "The methods this endpoint serves",
      schema: { type: "string" },
    },
  },
  429: {
    "Retry-After": {
      description: "Seconds until the limit lifts",
      schema: { type: "integer" },
    },
  },
  503: {
    "Retry-After": {
      description: "Seconds to wait before retrying",
      schema: { type: "integer" },
    },
  },
};

const challengeHeader = {
  "WWW-Authenticate": {
    description: 'RFC 6750\'s challenge: `Bearer`, and `error="invalid_token"` unless the token was missing',
    schema: { type: "string" },
  },
};

function errorResponse(
  name: OperationName,
  spec: OperationSpec,
  status: number,
): JsonObject {
  const { message, field, code, note } = errorExample(name, status);
  const details = status === 400
    ? { code, fields: [{ ...(field ? { field } : {}), message }] }
    : { code, ...(note ? { note } : {}) };
  const example = spec.envelope === "auth"
    ? { statusCode: status, message, ...details }
    : { error: message, success: false, ...details };
  const takesBearer = spec.envelope === "notes" || spec.bearer;
  const headers = takesBearer && status === 401 ? challengeHeader : errorHeaders[status];
  return {
    description: errorDescription(status),
    ...(headers ? { headers } : {}),
    content: {
      "application/json": {
        schema: schemaRef(errorEnvelopeNames[spec.envelope]),
        example,
      },
    },
  };
}

/**
 * A `text/event-stream` success: the body's example, and under `x-events`
 * each event's name and the schema of its `data`, which OpenAPI 3.1 has no
 * field for.
 */
function eventStreamResponse(name: OperationName, spec: OperationSpec, events: StreamEvents): JsonObject {
  const listed = Object.entries(events).map(([event, { data, description }]) =>
    `\`${event}\` (data: ${nameOf(eventDataNames, data)}): ${description}`
  );
  return {
    description: `${spec.summary}. Events: ${listed.join("; ")}.`,
    headers: {
      "Cache-Control": { description: "`no-store`", schema: { type: "string" } },
    },
    content: {
      "text/event-stream": {
        schema: schemaRef(eventStreamName),
        example: successExamples[name],
        "x-events": Object.fromEntries(
          Object.entries(events).map(([event, { data }]) => [event, schemaRef(nameOf(eventDataNames, data))]),
        ),
      },
    },
  };
}

/**
 * The 302 of a browser navigation: no body, and `Location` where the browser goes next. `Referrer-Policy:
 * no-referrer` keeps the URLs it passes through (state, codes) out of the next site's `Referer`.
 */
function redirectResponse(name: OperationName, spec: OperationSpec, success: RedirectSuccess): JsonObject {
  return {
    description: `${spec.summary}: a redirect the browser follows`,
    headers: {
      Location: {
        description: success.location,
        required: true,
        schema: { type: "string", format: "uri" },
        example: successExamples[name],
      },
      "Referrer-Policy": { description: "`no-referrer`", schema: { type: "string" } },
      "Cache-Control": { description: "`no-store`", schema: { type: "string" } },
    },
  };
}

function operationObject(
  name: OperationName,
  operationId: string,
  extraDescription = "",
): JsonObject {
  const spec: OperationSpec = operations[name];
  const { success } = spec;
  const responses: JsonObject = {
    [success.status]: "events" in success
      ? eventStreamResponse(name, spec, success.events)
      : "location" in success
      ? redirectResponse(name, spec, success)
      : {
        description: spec.summary,
        content: {
          "application/json": {
            schema: schemaRef(successEnvelopeName(spec.envelope, success.data)),
            example: successExamples[name],
          },
        },
      },
  };
  for (const status of spec.errors) {
    responses[status] = errorResponse(name, spec, status);
  }
  return {
    operationId,
    tags: [spec.admin ? "Admin" : spec.envelope === "auth" ? "Accounts" : "Notes"],
    summary: spec.summary,
    description: spec.description + extraDescription,
    // A browser navigation is reached by its URL alone: an empty requirement says no credentials.
    security: spec.browserNavigation
      ? []
      : spec.envelope === "notes"
      ? [{ bearer: [] }]
      : spec.bearer === "optional"
      ? [{ apikey: [] }, { apikey: [], bearer: [] }]
      : spec.bearer
      ? [{ apikey: [], bearer: [] }]
      : [{ apikey: [] }],
    ...(spec.query || spec.headers || spec.pathParameters
      ? {
        parameters: [
          ...(spec.pathParameters ? pathParameters(spec.pathParameters) : []),
          ...(spec.query ? queryParameters(spec.query) : []),
          ...headerParameters(spec),
        ],
      }
      : {}),
    ...(spec.body
      ? {
        requestBody: {
          // A body whose every field is optional may be left out.
          required: !spec.body.safeParse({}).success,
          content: {
            "application/json": {
              schema: schemaRef(nameOf(bodyNames, spec.body)),
              example: requestExamples[name],
            },
          },
        },
      }
      : {}),
    responses,
  };
}

/**
 * One path per operation. An auth operation is documented at the interface's
 * path (`/auth/login`); its single-purpose function (`/auth-login`) answers
 * the same and is named in the description, not listed again, so generated
 * clients get one method per operation.
 */
function paths(): JsonObject {
  const result: Record<string, JsonObject> = {};
  for (const name of Object.keys(operations) as OperationName[]) {
    const spec: OperationSpec = operations[name];
    const alias = spec.interfacePath ? ` Also served, identically, at \`/${spec.functionName}\`.` : "";
    const path = pathOf(spec);
    // One path may serve several operations (GET and DELETE /auth/sessions).
    result[path] = {
      ...result[path],
      [spec.method.toLowerCase()]: operationObject(name, name, alias),
    };
  }
  return result;
}

/**
 * The OpenAPI 3.1 document. `serverUrl`, when given, is listed first, so a
 * running stack can name itself.
 */
export function buildOpenApiDocument(serverUrl?: string): JsonObject {
  const servers = [
    { url: localServerUrl, description: "The local stack (npm start)" },
    {
      url: "https://{projectRef}.supabase.co/functions/v1",
      description: "A hosted Supabase project",
      variables: {
        projectRef: {
          default: "your-project-ref",
          description: "The project's reference id",
        },
      },
    },
  ];
  if (serverUrl && serverUrl !== localServerUrl) {
    servers.unshift({ url: serverUrl, description: "This stack" });
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "Personal notes and accounts",
      version: "1.0.0",
      description: "Accounts (register, log in, reset a password) and personal notes, served as Supabase Edge " +
        "Functions. Account operations take the project's public key in the `apikey` header and answer " +
        "`{success, statusCode, message, data}` or `{statusCode, message}`. Notes operations take " +
        "`Authorization: Bearer <accessToken>` and answer `{message, success, data}` or `{error, success: false}`. " +
        `Access tokens are JWTs valid for ${limits.accessTokenSeconds / 3600} hours; \`accessToken\` already ` +
        "carries its `Bearer ` prefix. Every caller sees only their own notes.",
    },
    servers,
    tags: [
      {
        name: "Accounts",
        description: "Registration, login and password reset",
      },
      { name: "Notes", description: "The signed-in user's notes" },
      { name: "Admin", description: "Managing accounts, for ADMIN accounts only; never their notes" },
    ],
    paths: paths(),
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apikey: {
          type: "apiKey",
          in: "header",
          name: "apikey",
          description: "The project's public (anon) key",
        },
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "The `accessToken` of login, register or create-password",
        },
      },
    },
  };
}
