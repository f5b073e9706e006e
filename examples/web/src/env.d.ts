/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The functions' base URL, set by vite.config.ts. */
  readonly VITE_NOTES_URL: string;
  /** The project's public key, set by vite.config.ts. */
  readonly VITE_NOTES_ANON_KEY: string;
}
