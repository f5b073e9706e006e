// The API without the client package: types generated from the service's
// OpenAPI document, calls made by openapi-fetch.
//
//   npx openapi-typescript http://127.0.0.1:54321/openapi.json -o src/notes-api.d.ts
import createClient from "openapi-fetch";
import type { paths } from "./notes-api";

const api = createClient<paths>({
  baseUrl: "http://127.0.0.1:54321/functions/v1",
  headers: { apikey: "local-dev-anon-key-not-for-production" },
});

/** Logs in and creates a note with only a title (status defaults to DRAFT, content to ""). */
export async function createTitledNote(email: string, password: string, title: string): Promise<string> {
  const login = await api.POST("/auth/login", { body: { email, password } });
  if (!login.data) throw new Error(login.error.message);
  const created = await api.POST("/notes-create", {
    body: { title },
    headers: { Authorization: login.data.data.accessToken },
  });
  if (!created.data) throw new Error(created.error.error);
  return created.data.data.id;
}
