/**
 * Validates a document against the official OpenAPI 3.1 schema with
 * `@seriousme/openapi-schema-validator`, which also resolves every `$ref`.
 *
 * @example
 * ```ts
 * const problems = await validateOpenApiDocument(JSON.parse(text));
 * if (problems.length) throw new Error(problems.join("\n"));
 * ```
 */
import { Validator } from "@seriousme/openapi-schema-validator";

/** The validator's complaints about `document`, one line each; empty when it is valid. */
export async function validateOpenApiDocument(
  document: Record<string, unknown>,
): Promise<string[]> {
  const validator = new Validator();
  const result = await validator.validate(document);
  if (result.valid) return [];
  if (validator.version !== "3.1") {
    return [`expected OpenAPI 3.1, found ${validator.version}`];
  }
  const errors = Array.isArray(result.errors) ? result.errors : [result.errors];
  return errors.map((error) => JSON.stringify(error));
}
