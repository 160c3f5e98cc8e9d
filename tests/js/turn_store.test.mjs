// assets/turn_store.js, the module Reflex components import: its hooks and TurnFeed, run
// with a stand-in React (support/react_stub.mjs) and fake browser APIs.
import assert from "node:assert/strict";
import { register } from "node:module";
import test from "node:test";

import { fakeFetch, FakeSource, memoryStorage, settle } from "./support/fakes.mjs";

register("./support/loader.mjs", import.meta.url);

const storage = memoryStorage();
globalThis.window = { sessionStorage: storage };
const sources = [];
globalThis.EventSource = class extends FakeSource {
  constructor(url) {
    super(url, sources);
  }
};
const { fetch, calls } = fakeFetch((url) => {
  if (url.pathname === "/_iu/turns") {
    const stored = { id: "4", ops: [["reset"], ["set", "text:0", "Stored reply"]] };
    return { body: { turns: { a: stored } } };
  }
  if (url.pathname === "/_iu/turns/live/calls/c1") {
    return { body: { label: "Read notes.md", arguments: "{}", result: "3 lines" } };
  }
  return { status: 404, body: { error: "Not found." } };
});
globalThis.fetch = fetch;

const turnStore = await import("../../assets/turn_store.js");
const { render } = await import("react");
const { TurnFeed, toggleOpen, useCallDetail, useReplySource, useTurnEntry } = turnStore;
const { useTurnOpen, useTurnText } = turnStore;

const feedProps = { conversation: "c1", token: "t1", lang: "en", ids: "a,live", live: "live" };
const feed = render(() => TurnFeed(feedProps));
await settle();

test("the module exports the hooks and TurnFeed", () => {
  assert.deepEqual(Object.keys(turnStore).sort(), [
    "TurnFeed",
    "isOpen",
    "toggleOpen",
    "useCallDetail",
    "useCanDecide",
    "useReplySource",
    "useTurnEntry",
    "useTurnOpen",
    "useTurnText",
  ]);
  assert.equal(feed.value, null); // TurnFeed renders nothing
});

test("TurnFeed fetches stored turns from the backend beside Reflex's event socket", () => {
  assert.equal(calls[0].origin, "http://localhost:8000");
  assert.equal(calls[0].pathname, "/_iu/turns");
  assert.equal(calls[0].searchParams.get("ids"), "a"); // the live one comes by its stream
  assert.equal(window.iuTurns.get("a", "text:0"), "Stored reply");
  assert.equal(sources[0].url.href, "http://localhost:8000/_iu/turns/live/stream?token=t1&lang=en");
});

test("a frame re-renders only the components reading the keys it changed", () => {
  const text = render(() => useTurnText("live", "text:0"));
  const card = render(() => useTurnEntry("live", "card:c1"));
  sources[0].frame("live", [["add", "text:0", 0, "Work"], ["add", "text:0", 4, "ing"]], "1");
  assert.equal(text.value, "Working");
  assert.equal(text.renders, 2); // once for the frame, not once per op
  assert.equal(card.value, undefined);
  assert.equal(card.renders, 1);
  sources[0].frame("live", [["set", "card:c1", { state: "running" }]], "2");
  assert.deepEqual(card.value, { state: "running" });
  assert.equal(text.renders, 2);
});

test("the reply source follows the text parts", () => {
  const reply = render(() => useReplySource("live"));
  assert.equal(reply.value, "");
  sources[0].frame("live", [["set", "turn", { parts: [{ kind: "text", key: "text:0" }] }]], "3");
  assert.equal(reply.value, "Working");
});

test("open state: the server's default until the reader toggles, kept in sessionStorage", () => {
  const group = render(() => useTurnOpen("live:1", true));
  assert.equal(group.value, true);
  assert.equal(toggleOpen("live:1", group.value), false);
  assert.equal(group.value, false);
  assert.deepEqual(JSON.parse(storage.getItem("iu-open")), [["live:1", false]]);
});

test("a call's detail: null while collapsed, loading, then the answer", async () => {
  let expanded = false;
  const detail = render(() => useCallDetail("live", "c1", expanded, 1));
  assert.equal(detail.value, null);
  expanded = true;
  detail.run();
  assert.deepEqual(detail.value, { loading: true });
  await new Promise((resolve) => setTimeout(resolve, 0)); // the throttle's first turn
  await settle();
  assert.deepEqual(detail.value, { label: "Read notes.md", arguments: "{}", result: "3 lines" });
  assert.equal(calls.at(-1).searchParams.get("token"), "t1");
  const missing = render(() => useCallDetail("live", "c404", true, 1));
  await new Promise((resolve) => setTimeout(resolve, 0)); // its own throttle: asked at once
  await settle();
  assert.deepEqual(missing.value, { error: "Not found." });
});

test("the stream closes when TurnFeed goes", () => {
  feed.unmount();
  assert.equal(sources[0].closed, true);
});

test("isOpen tells a reader's toggle from none", () => {
  assert.equal(turnStore.isOpen("never-toggled"), undefined);
  assert.equal(turnStore.toggleOpen("toggled-once", false), true);
  assert.equal(turnStore.isOpen("toggled-once"), true);
});

test("only a page whose TurnFeed says so answers approvals and questions", async () => {
  const decide = render(() => turnStore.useCanDecide());
  assert.equal(decide.value, false); // no TurnFeed now, as on a page that has none
  const shared = render(() => TurnFeed(feedProps));
  await settle();
  assert.equal(decide.value, false); // a shared page's TurnFeed does not say so
  shared.unmount();
  const owner = render(() => TurnFeed({ ...feedProps, decide: true }));
  await settle();
  assert.equal(decide.value, true);
  owner.unmount();
});
