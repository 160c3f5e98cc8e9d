// Streaming titles: the full labels of the live turn's streaming cards, held in the page
// and grown by the operations the server sends in the LiveTitles state
// (intent_ui/ui/live_titles.py describes them). Each push carries the few characters a
// title gained, not the whole title again, and applying it writes the `title` attribute
// of the labels showing it: no render, so a push during 128 streaming calls costs the page
// 128 attribute writes.
//
// The operations are read from the state store's listener, which runs once per received
// push: a component reading them as props would see only the last of two pushes React
// rendered together, and lose the first one's appends.
import { createElement, memo, useCallback, useContext, useEffect } from "react";
import { StateStoreContext } from "$/utils/context-registry";

const titles = new Map(); // title key -> text
const labels = new Map(); // title key -> Set of label elements showing it
let turn = null; // the message the titles belong to

// A label's title is its streamed title, or its own text while that is not truncated.
const show = (key) => {
  const text = titles.get(key);
  labels.get(key)?.forEach((element) => {
    element.setAttribute("title", text || element.textContent);
  });
};

const setTitle = (key, text) => {
  titles.set(key, text);
  show(key);
};

// `[key, start, text]`: start 0 sets the title; otherwise text continues a title whose
// length is start. Anything else is a gap (a push this page never got): the title stays
// as it is until the server's next full copy of it, which comes within about a second.
const applyTitleOps = (message, ops) => {
  if (message !== turn) {
    turn = message;
    titles.clear();
  }
  for (const [key, start, text] of ops ?? []) {
    const current = titles.get(key);
    if (start === 0) setTitle(key, text);
    else if (current !== undefined && current.length === start) setTitle(key, current + text);
  }
};

// Rendered once per page: follows the LiveTitles state (names passed in from Python).
export function LiveTitleFeed({ stateName, turnField, opsField }) {
  const store = useContext(StateStoreContext);
  useEffect(() => {
    let seenOps;
    let seenTurn;
    const read = () => {
      const state = store.getSnapshot(stateName);
      if (state === undefined) return;
      const ops = state[opsField];
      if (ops === seenOps && state[turnField] === seenTurn) return;
      seenOps = ops;
      seenTurn = state[turnField];
      applyTitleOps(seenTurn, ops);
    };
    read();
    return store.subscribe(stateName, read);
  }, [store, stateName, turnField, opsField]);
  return null;
}

// A card label: `label` as its text; its title is the streamed title under `titleKey`
// while the server streams it (written here at render and by each push in between),
// else `title`, else the label itself.
export const LiveLabel = memo(function LiveLabel({ titleKey, title, label, ...rest }) {
  const track = useCallback(
    (element) => {
      if (!titleKey) return undefined;
      let shown = labels.get(titleKey);
      if (shown === undefined) labels.set(titleKey, (shown = new Set()));
      shown.add(element);
      return () => {
        shown.delete(element);
        if (shown.size === 0 && labels.get(titleKey) === shown) labels.delete(titleKey);
      };
    },
    [titleKey],
  );
  const streamed = titleKey ? titles.get(titleKey) : undefined;
  return createElement("span", { ...rest, ref: track, title: streamed || title || label }, label);
});
