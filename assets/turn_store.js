// The page side of live and stored turns: hooks that read the turn store key by key, and
// `TurnFeed`, which fills it (snapshots, the live turn's stream: `turn_feed.js`). A frame
// re-renders only the components reading the keys it changed; Reflex state carries the
// ids and the token, never the turn's content.
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import env from "$/env.json";
import { getBackendURL } from "$/utils/state";
import { OpenState, REPLY, TurnStore } from "./turn_patches.js";
import { TurnFeedClient } from "./turn_feed.js";

const store = new TurnStore();
const inBrowser = typeof window !== "undefined";

let storage = null;
try {
  storage = inBrowser ? window.sessionStorage : null;
} catch {
  // Storage refused (privacy settings): toggles last as long as the page.
}
const openState = new OpenState(storage, "iu-open");

// The backend serves the routes beside Reflex's event socket: same host, port and path
// prefix, over HTTP.
function backendBase() {
  const url = getBackendURL(env.EVENT);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  url.pathname = url.pathname.replace(/\/_event\/?$/, "");
  url.search = "";
  url.hash = "";
  return url.href.replace(/\/$/, "");
}

// Made on first use: the backend URL depends on the page's own address.
let client = null;
const feedClient = () => (client ??= new TurnFeedClient(store, { base: backendBase() }));

// One key of one message's turn; undefined until the page holds it.
export function useTurnEntry(messageId, key) {
  const subscribe = useCallback(
    (listener) => store.subscribe(messageId, key, listener),
    [messageId, key],
  );
  const read = () => store.get(messageId, key);
  return useSyncExternalStore(subscribe, read, read);
}

// A string key (`text:{i}`, `title:...`, `announce`); "" until the page holds it.
export function useTurnText(messageId, key) {
  const value = useTurnEntry(messageId, key);
  return typeof value === "string" ? value : "";
}

// Whether the group or card `openKey` is open: the reader's last toggle in this tab, else
// `fallback` (the server's default).
export function useTurnOpen(openKey, fallback) {
  const subscribe = useCallback((listener) => openState.subscribe(openKey, listener), [openKey]);
  const read = () => openState.get(openKey) ?? Boolean(fallback);
  return useSyncExternalStore(subscribe, read, () => Boolean(fallback));
}

// The reader's stored toggle of `openKey`; undefined when they never toggled it.
export function isOpen(openKey) {
  return openState.get(openKey);
}

// Flips what `useTurnOpen(openKey, ...)` returned (`current`); returns the new state.
export function toggleOpen(openKey, current) {
  const next = !current;
  openState.set(openKey, next);
  return next;
}

// The reply's text parts, one paragraph apart, for the copy button; "" while none.
export function useReplySource(messageId) {
  const subscribe = useCallback(
    (listener) => store.subscribe(messageId, REPLY, listener),
    [messageId],
  );
  const read = () => store.replySource(messageId);
  return useSyncExternalStore(subscribe, read, read);
}

const LOADING = Object.freeze({ loading: true });
const DETAIL_GAP_MS = 250; // a streaming call's detail is asked for at most 4 times a second
const noProps = () => "";
const onFeedProps = (listener) => feedClient().onProps(listener);
const feedPropsKey = () => feedClient().propsKey();

// An expanded card's full label, arguments and result: null while collapsed,
// `{loading: true}` until the first answer, then `{label, arguments, result}` or
// `{error}`. Asked for again when `version` changes (the call grew or settled) and when
// the token or language does; an answer is shown only if no later request was answered
// first, and a failed refresh keeps the detail already shown.
export function useCallDetail(messageId, callId, expanded, version) {
  const propsKey = useSyncExternalStore(onFeedProps, feedPropsKey, noProps);
  const [shown, setShown] = useState(null); // { call, detail }
  const timing = useRef({ last: -Infinity, asked: 0, answered: 0 });
  const call = `${messageId}\u0000${callId}`;
  useEffect(() => {
    if (!expanded || !messageId || !callId) return undefined;
    const t = timing.current;
    // A throttle, not a debounce: versions changing every frame still get an answer
    // every DETAIL_GAP_MS.
    const wait = Math.max(0, t.last + DETAIL_GAP_MS - Date.now());
    const timer = setTimeout(async () => {
      t.last = Date.now();
      const asked = ++t.asked;
      const detail = await feedClient().fetchDetail(messageId, callId);
      if (detail === null || asked < t.answered) return;
      t.answered = asked;
      setShown((previous) =>
        detail.error && previous?.call === call && !previous.detail.error
          ? previous
          : { call, detail },
      );
    }, wait);
    return () => clearTimeout(timer);
  }, [messageId, callId, call, expanded, version, propsKey]);
  if (!expanded) return null;
  return shown?.call === call ? shown.detail : LOADING;
}

// Rendered once per chat page; renders nothing. Props: `conversation`, `token`, `lang`,
// `ids` ("id1,id2,..." of the turns shown), `live` (the running turn's message id or ""),
// `onExpired` (called once when the token is refused; a new token comes as a prop),
// `decide` (the reader owns the conversation: approvals and questions take their answer).
export function TurnFeed({ conversation, token, lang, ids, live, onExpired, decide }) {
  useEffect(() => {
    feedClient().update({
      conversation, token, lang, ids, live: live || "", onExpired, decide: Boolean(decide),
    });
  }, [conversation, token, lang, ids, live, onExpired, decide]);
  useEffect(() => () => feedClient().dispose(), []);
  return null;
}

const canDecide = () => Boolean(feedClient().props?.decide);
const cannotDecide = () => false;

// Whether this page may answer the turns' approvals and questions (the owner's chat page;
// a shared page may not).
export function useCanDecide() {
  return useSyncExternalStore(onFeedProps, canDecide, cannotDecide);
}

// For debugging and browser tests: `iuTurns.get(messageId, key)`.
if (inBrowser) {
  window.iuTurns = {
    get: (messageId, key) => store.get(messageId, key),
    lastId: (messageId) => store.lastId(messageId),
    held: (messageId) => store.held(messageId),
    replySource: (messageId) => store.replySource(messageId),
  };
}
