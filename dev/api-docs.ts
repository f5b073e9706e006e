/**
 * The API's documentation on the local stack: the OpenAPI document at
 * `/openapi.json` (generated from the contract, naming this stack as its first
 * server) and an interactive reference at `/docs`, Swagger UI served from the
 * `swagger-ui-dist` package so that nothing is fetched from elsewhere.
 *
 * @example
 * ```ts
 * const docs = serveApiDocs(req, new URL(req.url).pathname);
 * if (docs) return docs;
 * ```
 */
import { buildOpenApiDocument } from "../scripts/openapi/document.ts";

const swaggerUiDir = new URL("../node_modules/swagger-ui-dist/", import.meta.url);
const swaggerUiAssets: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
};

// validatorUrl null: Swagger UI would otherwise send the document to an online validator for its badge.
const docsPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Notes API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });
  </script>
</body>
</html>
`;

// The stack names itself by a relative URL, which clients resolve against where they fetched the
// document, so one text serves every Host and nothing a client sends is echoed or cached by it.
const servedDocument = JSON.stringify(buildOpenApiDocument("/functions/v1"), null, 2);

async function streamFile(path: URL, contentType: string): Promise<Response> {
  const { size } = await Deno.stat(path);
  const file = await Deno.open(path);
  return new Response(file.readable, { headers: { "Content-Type": contentType, "Content-Length": String(size) } });
}

/** Answers `/openapi.json`, `/docs` and the reference's assets at `pathname`; undefined for any other path. */
export function serveApiDocs(req: Request, pathname: string): Promise<Response> | undefined {
  if (req.method !== "GET" && req.method !== "HEAD") return undefined;
  if (pathname === "/openapi.json") {
    return Promise.resolve(
      new Response(servedDocument, {
        // Any origin may read it: tools and frontends on other ports load the document too.
        headers: { "Content-Type": "application/json; charset=utf-8", "Access-Control-Allow-Origin": "*" },
      }),
    );
  }
  if (pathname === "/docs" || pathname === "/docs/") {
    return Promise.resolve(new Response(docsPage, { headers: { "Content-Type": "text/html; charset=utf-8" } }));
  }
  const asset = /^\/docs\/([^/]+)$/.exec(pathname)?.[1];
  if (asset && Object.hasOwn(swaggerUiAssets, asset)) {
    // Streamed from the file: read whole, a 1.5 MB bundle per slow reader adds up to gigabytes.
    return streamFile(new URL(asset, swaggerUiDir), swaggerUiAssets[asset]);
  }
  return undefined;
}
