// Stand-ins for the browser APIs the turn feed uses: EventSource, fetch and timers, all
// driven by the test (nothing here waits for real time).

export class FakeSource {
  constructor(url, log) {
    this.url = new URL(url);
    this.readyState = 0; // CONNECTING
    this.listeners = new Map();
    log.push(this);
  }

  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  close() {
    this.readyState = 2; // CLOSED
  }

  get closed() {
    return this.readyState === 2;
  }

  // A server frame: `id: {id}` and `data: {"m": ..., "ops": [...]}`.
  frame(messageId, ops, id) {
    this.readyState = 1;
    this.#dispatch("message", { data: JSON.stringify({ m: messageId, ops }), lastEventId: id });
  }

  event(type) {
    this.#dispatch(type, { data: "{}", lastEventId: "" });
  }

  // The browser gives up on the stream (a refused connection).
  refuse() {
    this.readyState = 2;
    this.#dispatch("error", {});
  }

  #dispatch(type, event) {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
}

// `answer(url)` -> { status, body } decides each response; every URL asked is logged.
export function fakeFetch(answer) {
  const calls = [];
  const fetch = async (url) => {
    const parsed = new URL(url);
    calls.push(parsed);
    const { status = 200, body = {} } = (await answer(parsed)) ?? {};
    return { status, ok: status >= 200 && status < 300, json: async () => body };
  };
  return { fetch, calls };
}

export function fakeTimers() {
  const pending = new Map();
  let next = 1;
  return {
    pending,
    setTimeout(fn, delay) {
      pending.set(next, { fn, delay });
      return next++;
    },
    clearTimeout(id) {
      pending.delete(id);
    },
    // Runs the timers due now, and returns their delays.
    runAll() {
      const due = [...pending.entries()];
      pending.clear();
      for (const [, timer] of due) timer.fn();
      return due.map(([, timer]) => timer.delay);
    },
  };
}

// Lets pending promise callbacks (a fetch's answer) run.
export const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

export function memoryStorage(initial = {}) {
  const items = new Map(Object.entries(initial));
  return {
    items,
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => items.set(key, String(value)),
  };
}
