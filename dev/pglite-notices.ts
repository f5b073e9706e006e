/**
 * LISTEN and NOTIFY between the connections to an embedded PGlite that
 * pglite-socket serves. PGlite is one session shared by every connection: a
 * notice is written into the answer of whichever connection committed, so a
 * connection that ran LISTEN would hear nothing the others commit. This
 * passes each notice on to the connections that ran LISTEN, as PostgreSQL
 * does, so the functions' notice connection (`DATABASE_LISTEN_URL`) wakes live
 * update streams at once on the embedded database too.
 *
 * pglite-socket runs one message of one connection at a time through
 * `execProtocolRawStream`, whose `onRawData` writes to that connection's
 * socket (and to nothing once it has closed); this wraps that method. A notice
 * is passed on once the message that produced it is done, when every other
 * connection's answer stands between two messages.
 *
 * @example
 * ```ts
 * const db = await PGlite.create({ dataDir });
 * passNoticesToListeners(db);
 * const server = new PGLiteSocketServer({ db, port: 0, maxConnections: 2 });
 * ```
 */
import type { PGlite } from "@electric-sql/pglite";

type RawOptions = Parameters<PGlite["execProtocolRawStream"]>[1];
type Sink = RawOptions["onRawData"];

/** Sinks of connections that ran LISTEN, the newest last: one that has closed takes nothing, so a few are kept. */
const keptListeners = 16;
/** The protocol's message types: a simple query (frontend), a notification (backend). */
const queryMessage = 0x51;
const notificationMessage = 0x41;

/** Makes `db` pass every notice it sends to the connections that ran LISTEN on it. */
export function passNoticesToListeners(db: PGlite): void {
  const listeners: Sink[] = [];
  const run = db.execProtocolRawStream.bind(db);
  db.execProtocolRawStream = async (message: Uint8Array, options: RawOptions) => {
    if (isListen(message)) {
      listeners.push(options.onRawData);
      if (listeners.length > keptListeners) listeners.shift();
    }
    const notices: Uint8Array[] = [];
    const scanner = new NotificationScanner((notice) => notices.push(notice));
    try {
      await run(message, {
        ...options,
        onRawData: (bytes) => {
          scanner.scan(bytes);
          options.onRawData(bytes);
        },
      });
    } finally {
      for (const notice of notices) {
        for (const listener of listeners) if (listener !== options.onRawData) listener(notice);
      }
    }
  };
}

/** Whether `message` is a simple query that starts with LISTEN, as `pg` sends it. */
function isListen(message: Uint8Array): boolean {
  if (message[0] !== queryMessage) return false;
  return /^\s*listen\s/i.test(new TextDecoder().decode(message.subarray(5, 64)));
}

/**
 * Finds the notifications in the backend's answer to one message, whose
 * messages (a type byte, then a length that counts itself) may be split
 * across chunks, and hands each over whole.
 */
class NotificationScanner {
  readonly #found: (notice: Uint8Array) => void;
  readonly #header = new Uint8Array(5);
  #headerFilled = 0;
  /** Bytes of the current message's body still to come. */
  #left = 0;
  /** The notification being read, when the current message is one. */
  #notice: Uint8Array | undefined;
  #noticeFilled = 0;

  constructor(found: (notice: Uint8Array) => void) {
    this.#found = found;
  }

  scan(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#left === 0) {
        const take = Math.min(this.#header.length - this.#headerFilled, chunk.length - at);
        this.#header.set(chunk.subarray(at, at + take), this.#headerFilled);
        this.#headerFilled += take;
        at += take;
        if (this.#headerFilled < this.#header.length) return;
        this.#headerFilled = 0;
        const length = new DataView(this.#header.buffer).getInt32(1);
        this.#left = length - 4;
        this.#notice = this.#header[0] === notificationMessage ? new Uint8Array(1 + length) : undefined;
        this.#notice?.set(this.#header);
        this.#noticeFilled = this.#header.length;
      } else {
        const take = Math.min(this.#left, chunk.length - at);
        this.#notice?.set(chunk.subarray(at, at + take), this.#noticeFilled);
        this.#noticeFilled += take;
        this.#left -= take;
        at += take;
      }
      if (this.#left === 0 && this.#notice) {
        this.#found(this.#notice);
        this.#notice = undefined;
      }
    }
  }
}
