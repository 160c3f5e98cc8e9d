// How the page's turn store is filled: snapshots of the turns it shows, one EventSource
// for the turn that is running, call details on demand (the routes are in
// `intent_ui/ui/turn_routes.py`). Every frame is applied to the store the moment it
// arrives, whatever React is doing; components read the store when they render.
//
// Browser APIs come in through `env`, so tests drive this with fakes.

const CLOSED = 2; // EventSource.CLOSED: the browser gave up on the stream
const BACKOFF_MS = [1000, 2000, 4000, 8000, 10000];
const SNAPSHOT_BATCH = 50; // ids per snapshot request, to keep its URL short

const browser = () => ({
  EventSource: globalThis.EventSource,
  // Called unbound, `window.fetch` throws: keep it a call on globalThis.
  fetch: (...args) => globalThis.fetch(...args),
  setTimeout: (...args) => globalThis.setTimeout(...args),
  clearTimeout: (...args) => globalThis.clearTimeout(...args),
});

const backoff = (attempt) => BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];

const idsOf = (ids) =>
  String(ids ?? "")
    .split(",")
    .map((id) => id.trim())
    .filter(Boolean);

export class TurnFeedClient {
  constructor(store, { base, ...env }) {
    this.store = store;
    this.base = base;
    this.env = { ...browser(), ...env };
    this.props = null; // the TurnFeed's current props
    this.scope = null; // conversation and language the store holds turns of
    this.generation = 0; // bumped when answers to earlier requests must be dropped
    this.live = null; // { messageId, source, fresh, attempt, timer, waitingFor }
    this.ended = null; // the live id whose stream ended: not reopened while still `live`
    this.pending = new Set(); // ids whose snapshot is being fetched
    this.snapshotAttempt = 0;
    this.snapshotTimer = null;
    this.expiredFor = null; // the token onExpired was called for (once per token)
    this.propListeners = new Set();
  }

  // Called with the TurnFeed's props on every change (cheap and idempotent).
  update(props) {
    const previous = this.props;
    this.props = props;
    const scope = `${props.conversation}\n${props.lang}`;
    if (scope !== this.scope) {
      // Another conversation or language: every held turn reads differently now.
      this.scope = scope;
      this.#reset();
      this.store.clearAll();
    }
    if (
      previous?.token !== props.token ||
      previous?.lang !== props.lang ||
      previous?.decide !== props.decide
    ) {
      for (const listener of [...this.propListeners]) listener();
    }
    this.#followLive();
    this.#fetchSnapshots();
  }

  // The TurnFeed unmounted: stop all traffic, keep the store for a remount.
  dispose() {
    this.#reset();
    this.props = null;
  }

  // For the call detail hook: changes whenever a detail fetched earlier may be stale or
  // failed for a reason that is now gone (token or language changed).
  propsKey() {
    return this.props === null ? "" : `${this.props.token}\n${this.props.lang}`;
  }

  onProps(listener) {
    this.propListeners.add(listener);
    return () => this.propListeners.delete(listener);
  }

  // -> { label, arguments, result, tool_arguments?, editable? } | { error }; null while
  // there are no props yet.
  async fetchDetail(messageId, callId) {
    const props = this.props;
    if (props === null) return null;
    const path = `/_iu/turns/${encodeURIComponent(messageId)}/calls/${encodeURIComponent(callId)}`;
    try {
      const response = await this.env.fetch(this.#url(path, props));
      const body = await response.json().catch(() => ({}));
      if (response.status === 401) this.#expired(props.token);
      if (!response.ok) return { error: String(body?.error || `HTTP ${response.status}`) };
      const detail = {
        label: String(body.label ?? ""),
        arguments: String(body.arguments ?? ""),
        result: String(body.result ?? ""),
      };
      // A call waiting for approval: what its tool receives, and the text to edit.
      if (typeof body.tool_arguments === "string") detail.tool_arguments = body.tool_arguments;
      if (typeof body.editable === "string") detail.editable = body.editable;
      return detail;
    } catch (error) {
      return { error: String(error?.message ?? error) };
    }
  }

  #url(path, props, extra = {}) {
    const query = new URLSearchParams({ token: props.token ?? "", lang: props.lang ?? "" });
    for (const [name, value] of Object.entries(extra)) query.set(name, value);
    return `${this.base}${path}?${query}`;
  }

  #reset() {
    this.generation += 1;
    if (this.live !== null) this.#stop(this.live);
    this.live = null;
    this.ended = null;
    this.pending.clear();
    this.env.clearTimeout(this.snapshotTimer);
    this.snapshotTimer = null;
    this.snapshotAttempt = 0;
  }

  // Asks for a new token, once per token: the state mints one and the props change.
  #expired(token) {
    if (this.props === null || token !== this.props.token || this.expiredFor === token) return;
    this.expiredFor = token;
    this.props.onExpired?.();
  }

  // ---- the live turn's stream

  #followLive() {
    const messageId = this.props.live || "";
    if (messageId !== this.ended) this.ended = null;
    const live = this.live;
    if (live !== null && live.messageId !== messageId) {
      this.#stop(live);
      this.live = null;
      // Closed before its end: the frames after the last one held may be missing, so the
      // turn is fetched as a snapshot (it keeps showing what it has meanwhile).
      this.store.release(live.messageId);
    }
    if (messageId && this.live === null && messageId !== this.ended) {
      this.live = {
        messageId,
        source: null,
        fresh: false, // opened without a position: its first frame replaces what is held
        attempt: 0, // failed connections since the last good frame
        timer: null,
        waitingFor: null, // the refused token: reopened once the props bring another
      };
      this.#open(this.live);
    } else if (this.live?.waitingFor != null && this.live.waitingFor !== this.props.token) {
      this.live.waitingFor = null;
      this.#open(this.live);
    }
  }

  #open(live) {
    const from = this.store.lastId(live.messageId);
    const path = `/_iu/turns/${encodeURIComponent(live.messageId)}/stream`;
    const url = this.#url(path, this.props, from ? { from } : {});
    // Opened without a position, the stream starts over: its first frame replaces
    // whatever the page held, even if it does not start with a reset itself.
    live.fresh = !from;
    const source = new this.env.EventSource(url);
    live.source = source;
    const current = () => this.live === live && live.source === source;
    source.addEventListener("message", (event) => {
      if (current()) this.#frame(live, event);
    });
    source.addEventListener("end", () => {
      if (current()) this.#finish(live);
    });
    source.addEventListener("revoked", () => {
      if (!current()) return;
      this.#finish(live);
      this.store.clear(live.messageId);
      this.store.set(live.messageId, "revoked", true);
    });
    source.addEventListener("error", () => {
      // While CONNECTING the browser retries by itself, sending Last-Event-ID.
      if (current() && source.readyState === CLOSED) this.#refused(live, url);
    });
  }

  #frame(live, event) {
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = null;
    }
    if (data !== null && data.m !== undefined && data.m !== live.messageId) return;
    let ops = Array.isArray(data?.ops) ? data.ops : null;
    if (ops !== null && live.fresh && ops[0]?.[0] !== "reset") ops = [["reset"], ...ops];
    const result = ops === null ? "gap" : this.store.apply(live.messageId, ops, event.lastEventId);
    if (result === "gap") {
      // The page missed a frame: start the stream over rather than show a wrong text.
      this.store.release(live.messageId);
      this.#close(live);
      this.#retry(live, live.attempt === 0);
      return;
    }
    live.fresh = false;
    live.attempt = 0;
  }

  #finish(live) {
    this.#stop(live);
    this.ended = live.messageId;
    if (this.live === live) this.live = null;
  }

  // The server refused the stream (or the connection failed for good): the status says
  // whether a new token is needed. EventSource does not expose it, so ask with fetch and
  // drop the body.
  async #refused(live, url) {
    this.#close(live);
    const token = this.props?.token;
    let status = 0;
    const abort = new AbortController();
    try {
      status = (await this.env.fetch(url, { signal: abort.signal })).status;
    } catch {
      // A network failure: retried like any other refusal.
    } finally {
      abort.abort();
    }
    if (this.live !== live) return;
    if (status === 401) {
      live.waitingFor = token; // reopened by the update bringing the new token
      this.#expired(token);
      if (this.props?.token !== token) this.#followLive();
    } else {
      this.#retry(live, false);
    }
  }

  // A refusal waits 1 s, 2 s, ... up to 10 s; so do gaps, but for the first one after a
  // good frame (one lost frame is no reason to wait).
  #retry(live, now) {
    const delay = now ? 0 : backoff(live.attempt);
    live.attempt += 1;
    live.timer = this.env.setTimeout(() => {
      live.timer = null;
      if (this.live === live) this.#open(live);
    }, delay);
  }

  #close(live) {
    live.source?.close();
    live.source = null;
  }

  #stop(live) {
    this.#close(live);
    this.env.clearTimeout(live.timer);
    live.timer = null;
  }

  // ---- snapshots of the turns the page shows

  #fetchSnapshots() {
    const props = this.props;
    if (this.snapshotTimer !== null || this.expiredFor === props.token) return;
    const live = props.live || "";
    const wanted = idsOf(props.ids).filter(
      (id) => id !== live && !this.store.held(id) && !this.pending.has(id),
    );
    for (let i = 0; i < wanted.length; i += SNAPSHOT_BATCH) {
      this.#fetchBatch(wanted.slice(i, i + SNAPSHOT_BATCH), props);
    }
  }

  async #fetchBatch(ids, props) {
    const generation = this.generation;
    for (const id of ids) this.pending.add(id);
    let status = 0;
    let turns = null;
    try {
      const response = await this.env.fetch(this.#url("/_iu/turns", props, { ids: ids.join(",") }));
      status = response.status;
      if (response.ok) turns = (await response.json())?.turns ?? {};
    } catch {
      turns = null;
    }
    if (generation !== this.generation) return; // asked for another scope
    for (const id of ids) this.pending.delete(id);
    if (turns !== null) {
      this.snapshotAttempt = 0;
      for (const [id, turn] of Object.entries(turns)) {
        // The stream (or an earlier answer) is the newer source for these.
        if (id === (this.props?.live || "") || this.store.held(id)) continue;
        this.store.apply(id, turn?.ops, turn?.id);
      }
    } else if (status === 401) {
      this.#expired(props.token); // fetched again by the update bringing the new token
    } else {
      this.snapshotTimer = this.env.setTimeout(() => {
        this.snapshotTimer = null;
        if (this.props !== null) this.#fetchSnapshots();
      }, backoff(this.snapshotAttempt++));
    }
  }
}
