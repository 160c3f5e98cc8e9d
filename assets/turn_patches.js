// The page's copy of the turns it shows, `message id -> key -> value`, changed by the ops
// of the server's frames (`intent_ui/core/patches.py` holds the same rules in Python,
// `apply_ops`). Kept free of React and browser APIs so `node --test` can run it.
//
// Readers subscribe to one key of one message: a frame that grows one card's label wakes
// that card alone, and only after the whole frame is applied, so a key two ops of the
// frame touched is read once, in its final state.

// A pseudo key, woken whenever the `turn` entry or a text part of the message changes:
// what the reply's copy source is made of.
export const REPLY = "\u0000reply";

// "seq" or "seq.n" (a frame with no new event, n = 1, 2, ...): ordered by (seq, n).
const idParts = (id) => String(id).split(".").map(Number);

export function compareIds(a, b) {
  const [seqA, nA = 0] = idParts(a);
  const [seqB, nB = 0] = idParts(b);
  return seqA - seqB || nA - nB;
}

// Subscribers by string key; `notify` runs on a copy so a reader may unsubscribe while
// being notified (React does so when a notified component unmounts another).
export class Listeners {
  #byKey = new Map();

  subscribe(key, listener) {
    let set = this.#byKey.get(key);
    if (set === undefined) this.#byKey.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#byKey.get(key) === set) this.#byKey.delete(key);
    };
  }

  notify(key) {
    const set = this.#byKey.get(key);
    if (set !== undefined) for (const listener of [...set]) listener();
  }
}

// The NUL keeps a message id and a key apart whatever characters they hold.
const slot = (messageId, key) => `${messageId}\u0000${key}`;

const reachesReply = (key) => key === "turn" || key.startsWith("text:");

export class TurnStore {
  // message id -> { values: Map, lastId, synced, replyVersion, reply }
  // `synced` is false after a gap: what the page holds is then no longer the state after
  // any frame, and only a frame starting with a reset may change it.
  #messages = new Map();
  #listeners = new Listeners();

  get(messageId, key) {
    return this.#messages.get(messageId)?.values.get(key);
  }

  // The page has this message in a state the server sent (a snapshot, frames, or a
  // revoked link's flag): no snapshot needs to be fetched for it.
  held(messageId) {
    return this.#messages.get(messageId)?.synced === true;
  }

  // The id to resume the message's stream from; undefined when the page must start over.
  lastId(messageId) {
    const record = this.#messages.get(messageId);
    return record?.synced ? record.lastId : undefined;
  }

  subscribe(messageId, key, listener) {
    return this.#listeners.subscribe(slot(messageId, key), listener);
  }

  // Applies one frame's ops in order and returns "applied"; "stale" for a frame the page
  // already holds (its id is not after the last one, as after a reconnect); "gap" when an
  // `add` does not continue the value it names. A gap stops the frame there: the values
  // stay as they were (old, never wrong) until a frame starting with a reset.
  apply(messageId, ops, id) {
    const list = Array.isArray(ops) ? ops : [];
    const resets = list[0]?.[0] === "reset";
    let record = this.#messages.get(messageId);
    if (!resets && record !== undefined) {
      if (!record.synced) return "gap";
      if (id && record.lastId && compareIds(id, record.lastId) <= 0) return "stale";
    }
    if (record === undefined) record = this.#record(messageId);
    const touched = new Set();
    let result = "applied";
    for (const op of list) {
      if (!Array.isArray(op)) continue;
      const [kind, key] = op;
      if (kind === "reset") {
        for (const known of record.values.keys()) touched.add(known);
        record.values.clear();
        record.synced = true;
      } else if (kind === "set") {
        record.values.set(key, op[2]);
        touched.add(key);
      } else if (kind === "add") {
        const [, , start, text] = op;
        const current = record.values.get(key) ?? "";
        // `.length` counts UTF-16 code units, as the server counts `start`.
        if (typeof current !== "string" || current.length !== start) {
          record.synced = false;
          record.lastId = undefined;
          result = "gap";
          break;
        }
        record.values.set(key, current + text);
        touched.add(key);
      }
    }
    if (result === "applied" && id) record.lastId = String(id);
    this.#notify(messageId, record, touched);
    return result;
  }

  // A value set outside the frames (the `revoked` flag): the message counts as held.
  set(messageId, key, value) {
    const record = this.#messages.get(messageId) ?? this.#record(messageId);
    record.values.set(key, value);
    this.#notify(messageId, record, new Set([key]));
  }

  // Keeps what the message shows but asks for it again: the next frame for it must start
  // with a reset, and `held` is false so a snapshot is fetched (a live stream that was
  // closed before its end).
  release(messageId) {
    const record = this.#messages.get(messageId);
    if (record === undefined) return;
    record.synced = false;
    record.lastId = undefined;
  }

  clear(messageId) {
    const record = this.#messages.get(messageId);
    if (record === undefined) return;
    this.#messages.delete(messageId);
    this.#notify(messageId, record, new Set(record.values.keys()));
  }

  clearAll() {
    for (const messageId of [...this.#messages.keys()]) this.clear(messageId);
  }

  // The reply as the model wrote it, for the copy button: the text parts one paragraph
  // apart (mirrors `reply_source` in `ui/components/copy.py`). Joined again only when
  // the turn or a text part changed, since React reads it on every render.
  replySource(messageId) {
    const record = this.#messages.get(messageId);
    if (record === undefined) return "";
    if (record.reply?.version !== record.replyVersion) {
      const parts = record.values.get("turn")?.parts ?? [];
      const value = parts
        .filter((part) => part.kind === "text")
        .map((part) => String(record.values.get(part.key) ?? ""))
        .map((text) => text.replace(/^\n+/, "").trimEnd())
        .filter((text) => text !== "")
        .join("\n\n");
      record.reply = { version: record.replyVersion, value };
    }
    return record.reply.value;
  }

  #record(messageId) {
    const record = { values: new Map(), lastId: undefined, synced: true, replyVersion: 0 };
    this.#messages.set(messageId, record);
    return record;
  }

  #notify(messageId, record, touched) {
    let reply = false;
    for (const key of touched) reply ||= reachesReply(key);
    if (reply) {
      record.replyVersion += 1;
      touched.add(REPLY);
    }
    for (const key of touched) this.#listeners.notify(slot(messageId, key));
  }
}

// Which groups and cards the reader opened or closed, per tab: a re-render, a new frame or
// a reload must not undo a toggle. `storage` is sessionStorage (or null where there is
// none); the newest toggles are kept, up to `limit`, so a long session stays small.
export class OpenState {
  #storage;
  #name;
  #limit;
  #open = null; // key -> boolean, oldest toggle first; read from storage on first use
  #listeners = new Listeners();

  constructor(storage, name = "iu-open", limit = 500) {
    this.#storage = storage;
    this.#name = name;
    this.#limit = limit;
  }

  get(key) {
    return this.#map().get(key);
  }

  set(key, value) {
    const open = this.#map();
    open.delete(key); // re-inserted last: the newest toggle survives the limit
    open.set(key, Boolean(value));
    while (open.size > this.#limit) open.delete(open.keys().next().value);
    try {
      this.#storage?.setItem(this.#name, JSON.stringify([...open]));
    } catch {
      // Full or refused storage: the toggle still holds for this page's life.
    }
    this.#listeners.notify(key);
  }

  subscribe(key, listener) {
    return this.#listeners.subscribe(key, listener);
  }

  #map() {
    if (this.#open !== null) return this.#open;
    this.#open = new Map();
    try {
      const pairs = JSON.parse(this.#storage?.getItem(this.#name) ?? "[]");
      for (const [key, value] of Array.isArray(pairs) ? pairs : []) {
        this.#open.set(String(key), Boolean(value));
      }
    } catch {
      // Unreadable storage starts empty rather than breaking the page.
    }
    return this.#open;
  }
}
