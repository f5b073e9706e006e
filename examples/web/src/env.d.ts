/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The functions' base URL, set by vite.config.ts. */
  readonly VITE_NOTES_URL: string;
  /** The project's public key, set by vite.config.ts. */
  readonly VITE_NOTES_ANON_KEY: string;
  /** Where a local stack prints the codes it mails ("in the terminal where …"); empty for a deployed project. */
  readonly VITE_NOTES_CODES_HINT: string;
  /** The sign-in providers to offer, comma-separated (`google,microsoft`); empty for none. Set by vite.config.ts. */
  readonly VITE_NOTES_PROVIDERS: string;
  /** With no provider to offer on a local stack, how to start one; else empty. Set by vite.config.ts. */
  readonly VITE_NOTES_PROVIDER_HINT: string;
}
